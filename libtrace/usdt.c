#include "usdt.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errf.h"

static unsigned long long addr_at(const unsigned char *p, bool elf64)
{
	if (elf64) {
		unsigned long long v;

		memcpy(&v, p, 8);
		return v;
	} else {
		unsigned int v;

		memcpy(&v, p, 4);
		return v;
	}
}

int tk_usdt_note_parse(const void *desc, size_t len, bool elf64,
		       struct tk_usdt_probe *p)
{
	const unsigned char *d = desc;
	size_t asz = elf64 ? 8 : 4, off = 3 * asz, s[3], i;
	char *strings;

	memset(p, 0, sizeof(*p));
	if (len < off)
		return -EINVAL;
	for (i = 0; i < 3; i++) {
		const unsigned char *nul = memchr(d + off, 0, len - off);

		if (!nul)
			return -EINVAL;
		s[i] = off;
		off = nul - d + 1;
	}
	if (d[s[0]] == 0 || d[s[1]] == 0)
		return -EINVAL;
	strings = malloc(off - s[0]);
	if (!strings)
		return -ENOMEM;
	memcpy(strings, d + s[0], off - s[0]);
	p->strings = strings;
	p->provider = strings;
	p->name = strings + (s[1] - s[0]);
	p->args = strings + (s[2] - s[0]);
	p->pc = addr_at(d, elf64);
	p->base = addr_at(d + asz, elf64);
	p->sema = addr_at(d + 2 * asz, elf64);
	p->addr = p->pc;
	return 0;
}

void tk_usdt_free(struct tk_usdt_probe *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].strings);
	free(v);
}

/* The address of section .stapsdt.base, or 0 when there is none. */
static unsigned long long base_section(Elf *elf, size_t shstrndx)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh)) {
			const char *name = elf_strptr(elf, shstrndx, sh.sh_name);

			if (name && !strcmp(name, ".stapsdt.base"))
				return sh.sh_addr;
		}
	return 0;
}

static int scan_notes(Elf_Scn *scn, bool elf64,
		      unsigned long long base, struct tk_usdt_probe **out,
		      size_t *n)
{
	Elf_Data *data = NULL;

	while ((data = elf_getdata(scn, data))) {
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;

		while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			struct tk_usdt_probe p, *v;
			int err;

			if (nh.n_type != TK_USDT_NOTE_TYPE || nh.n_namesz != 8 ||
			    memcmp((char *)data->d_buf + name_off, "stapsdt", 8))
				continue;
			err = tk_usdt_note_parse((char *)data->d_buf + desc_off,
						 nh.n_descsz, elf64, &p);
			if (err == -EINVAL)
				continue;  /* a bad note hides no other */
			if (err)
				return err;
			if (base && p.base)
				p.addr = p.pc + base - p.base;
			v = realloc(*out, (*n + 1) * sizeof(*v));
			if (!v) {
				free(p.strings);
				return -ENOMEM;
			}
			*out = v;
			v[(*n)++] = p;
		}
	}
	return 0;
}

int tk_usdt_list(const char *path, struct tk_usdt_probe **out, size_t *n,
		 char *err, size_t errlen)
{
	unsigned long long base;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int fd, ret = 0;
	bool elf64;
	Elf *elf;

	*out = NULL;
	*n = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return tk_errf(err, errlen, -ENOENT, "cannot open %s: %s", path,
			       strerror(errno));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx)) {
		ret = tk_errf(err, errlen, -ENOEXEC, "%s is not an ELF file", path);
		goto out;
	}
	elf64 = gelf_getclass(elf) == ELFCLASS64;
	base = base_section(elf, shstrndx);
	while (!ret && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".note.stapsdt"))
			ret = scan_notes(scn, elf64, base, out, n);
	}
	if (ret) {
		tk_usdt_free(*out, *n);
		*out = NULL;
		*n = 0;
		tk_errf(err, errlen, ret, "%s: %s", path, strerror(-ret));
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}
