/* Function targets: "FUNC", "LIB:FUNC", "PATH:FUNC" (see functarget.h). */
#include "functarget.h"
#include "procfile.h"
#include "errf.h"
#include "setup.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__)
#define TRIPLET "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define TRIPLET "aarch64-linux-gnu"
#elif defined(__i386__)
#define TRIPLET "i386-linux-gnu"
#elif defined(__arm__)
#define TRIPLET "arm-linux-gnueabihf"
#elif defined(__riscv) && __riscv_xlen == 64
#define TRIPLET "riscv64-linux-gnu"
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define TRIPLET "powerpc64le-linux-gnu"
#elif defined(__s390x__)
#define TRIPLET "s390x-linux-gnu"
#endif

static const char *const lib_dirs[] = {
#ifdef TRIPLET
	"/lib/" TRIPLET, "/usr/lib/" TRIPLET,
#endif
	"/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib",
};

/* ---- ELF identity ---- */

struct elf_id {
	unsigned char cls;
	unsigned short type, machine;
};

/* The ELF header's class, type and machine; false when not ELF. */
static bool elf_identify(const char *path, struct elf_id *id)
{
	unsigned char h[20];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, h, sizeof(h));
	close(fd);
	if (n != (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG))
		return false;
	id->cls = h[EI_CLASS];
	/* Native byte order: a library for another byte order is of
	 * another machine anyway, and then does not match ours. */
	memcpy(&id->type, h + 16, 2);
	memcpy(&id->machine, h + 18, 2);
	return true;
}

/* Is path a shared library (or executable) for this machine? */
static bool native_elf(const char *path)
{
	static struct elf_id self;
	static int have_self = -1;
	struct elf_id id;

	if (have_self < 0)
		have_self = elf_identify("/proc/self/exe", &self);
	if (!elf_identify(path, &id))
		return false;
	if (id.type != ET_DYN && id.type != ET_EXEC)
		return false;
	return !have_self || (id.cls == self.cls && id.machine == self.machine);
}

/* ---- library names ---- */

/* "libssl.so.3", "ld-linux-x86-64.so.2": a file name, matched exactly. */
static bool is_file_name(const char *name)
{
	const char *p = name;

	while ((p = strstr(p, ".so"))) {
		if (p[3] == 0 || p[3] == '.')
			return true;
		p += 3;
	}
	return false;
}

/* After the library's stem: ".so" alone or with a version, or (in a
 * process's maps, for older glibc's libc-2.31.so) "-VERSION...so". */
static bool so_suffix(const char *r, bool dash_version)
{
	if (!strncmp(r, ".so", 3) && (r[3] == 0 || r[3] == '.'))
		return true;
	return dash_version && r[0] == '-' && isdigit((unsigned char)r[1]) &&
	       strstr(r, ".so");
}

/* Is base (a file name) the library that NAME means? */
static bool lib_matches(const char *base, const char *name, bool dash_version)
{
	size_t n = strlen(name);

	if (is_file_name(name))
		return !strcmp(base, name);
	if (!strncmp(base, "lib", 3) && !strncmp(base + 3, name, n) &&
	    so_suffix(base + 3 + n, dash_version))
		return true;
	/* "libz" for "z" */
	return !strncmp(name, "lib", 3) && !strncmp(base, name, n) &&
	       so_suffix(base + n, dash_version);
}

static int copy_path(char *dst, size_t size, const char *src)
{
	if (strlen(src) >= size)
		return -ENAMETOOLONG;
	strcpy(dst, src);
	return 0;
}

/* The library as process pid maps it. The path in maps is in that
 * process's mount namespace: when it is not the same file here (same
 * inode), reach it through /proc/PID/root. */
static int find_in_maps(const char *name, pid_t pid, char *path, size_t size)
{
	char maps[64], alt[PATH_MAX + 64], *line = NULL;
	size_t cap = 0;
	int ret = -ENOENT;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "re");
	if (!f)
		return -ENOENT;
	while (ret && getline(&line, &cap, f) > 0) {
		unsigned long ino;
		struct stat st;
		char *p, *base;
		int n = 0;

		if (sscanf(line, "%*s %*s %*s %*s %lu %n", &ino, &n) < 1 || !n)
			continue;
		p = line + n;
		p[strcspn(p, "\n")] = 0;
		if (*p != '/' || strstr(p, " (deleted)"))
			continue;
		base = strrchr(p, '/') + 1;
		if (!lib_matches(base, name, true))
			continue;
		if (!stat(p, &st) && st.st_ino == ino) {
			ret = copy_path(path, size, p);
			continue;
		}
		snprintf(alt, sizeof(alt), "/proc/%d/root%s", (int)pid, p);
		if (!stat(alt, &st) && st.st_ino == ino)
			ret = copy_path(path, size, alt);
	}
	free(line);
	fclose(f);
	return ret;
}

/* ld.so.cache, glibc's format "glibc-ld.so.cache1.1" (alone since glibc
 * 2.32; before, after the old "ld.so-1.7.0" table). String offsets are
 * from the start of the new header. */
#define CACHE_OLD "ld.so-1.7.0"
#define CACHE_NEW "glibc-ld.so.cache1.1"

struct cache_hdr {
	char magic[20];
	uint32_t nlibs;
	uint32_t len_strings;
	uint8_t flags;
	uint8_t pad[3];
	uint32_t extension_offset;
	uint32_t unused[3];
};

struct cache_entry {
	int32_t flags;
	uint32_t key, value;
	uint32_t osversion;
	uint64_t hwcap;
};

static char *read_file(const char *path, size_t *size)
{
	struct stat st;
	char *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || st.st_size <= 0 || st.st_size > (64 << 20)) {
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	buf = malloc(st.st_size + 1);
	n = buf ? read(fd, buf, st.st_size) : -1;
	close(fd);
	if (n != st.st_size) {
		free(buf);
		errno = EINVAL;
		return NULL;
	}
	buf[n] = 0;
	*size = n;
	return buf;
}

int tk_ldcache_find(const char *cache, const char *name, char *path,
		    size_t size)
{
	const struct cache_hdr *h;
	const struct cache_entry *e;
	size_t len, off = 0, i, nlibs;
	char *buf = read_file(cache, &len);
	int ret = -ENOENT;

	if (!buf)
		return -errno;
	if (len >= 16 && !memcmp(buf, CACHE_OLD, sizeof(CACHE_OLD) - 1)) {
		uint32_t old_n;

		memcpy(&old_n, buf + 12, 4);
		off = 16 + (size_t)old_n * 12;
		off = (off + 7) & ~(size_t)7;
	}
	if (off > len || len - off < sizeof(*h) ||
	    memcmp(buf + off, CACHE_NEW, sizeof(CACHE_NEW) - 1)) {
		free(buf);
		return -EINVAL;
	}
	h = (const struct cache_hdr *)(buf + off);
	nlibs = h->nlibs;
	if (nlibs > (len - off - sizeof(*h)) / sizeof(*e)) {
		free(buf);
		return -EINVAL;
	}
	e = (const struct cache_entry *)(h + 1);
	for (i = 0; i < nlibs && ret; i++) {
		const char *key, *value, *base;

		if (e[i].key >= len - off || e[i].value >= len - off)
			continue;
		/* buf is NUL-terminated, so are these */
		key = buf + off + e[i].key;
		value = buf + off + e[i].value;
		base = strrchr(key, '/') ? strrchr(key, '/') + 1 : key;
		if (lib_matches(base, name, false) && native_elf(value))
			ret = copy_path(path, size, value);
	}
	free(buf);
	return ret;
}

/* The standard directories, when the cache does not have it. */
static int find_in_dirs(const char *name, char *path, size_t size)
{
	char best[NAME_MAX + 1], cand[PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(lib_dirs) / sizeof(lib_dirs[0]); i++) {
		DIR *d = opendir(lib_dirs[i]);
		struct dirent *de;

		if (!d)
			continue;
		best[0] = 0;
		while ((de = readdir(d))) {
			if (!lib_matches(de->d_name, name, false) ||
			    (best[0] && strcmp(de->d_name, best) >= 0))
				continue;
			snprintf(cand, sizeof(cand), "%s/%s", lib_dirs[i], de->d_name);
			if (native_elf(cand))
				snprintf(best, sizeof(best), "%s", de->d_name);
		}
		closedir(d);
		if (best[0]) {
			snprintf(cand, sizeof(cand), "%s/%s", lib_dirs[i], best);
			return copy_path(path, size, cand);
		}
	}
	return -ENOENT;
}

int tk_find_library(const char *name, pid_t pid, char *path, size_t size)
{
	if (!*name || strchr(name, '/'))
		return -ENOENT;
	if (pid > 0 && !find_in_maps(name, pid, path, size))
		return 0;
	if (!tk_ldcache_find("/etc/ld.so.cache", name, path, size))
		return 0;
	return find_in_dirs(name, path, size);
}

/* A program found in PATH, as a shell would. */
static int find_program(const char *name, char *path, size_t size)
{
	const char *env = getenv("PATH"), *p, *end;
	char cand[PATH_MAX];
	struct stat st;

	if (!env || !*env)
		env = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	for (p = env; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ':');
		if (end == p)
			continue;
		if (snprintf(cand, sizeof(cand), "%.*s/%s", (int)(end - p), p,
			     name) >= (int)sizeof(cand))
			continue;
		if (!stat(cand, &st) && S_ISREG(st.st_mode) && !access(cand, X_OK))
			return copy_path(path, size, cand);
	}
	return -ENOENT;
}

/* ---- functions in ELF files ---- */

struct sym_scan {
	int defined;       /* STT_FUNC matches with an address */
	int strong;        /* ... of them not weak */
	int current;       /* ... of them not an old symbol version */
	bool undefined;    /* an import of that name */
	bool ifunc;        /* a GNU indirect function of that name */
	bool other;        /* a symbol of that name, not a function */
};

/* libbpf's match (elf_find_func_offset): the name, or the name followed
 * by "@VERSION"; a name with "@@" matches as a prefix. */
static bool sym_name_matches(const char *sname, const char *func)
{
	size_t n = strlen(func);

	if (strncmp(sname, func, n))
		return false;
	return strstr(func, "@@") || sname[n] == 0 || sname[n] == '@';
}

/* The version index of each .dynsym entry (.gnu.version); bit 15 marks
 * an old version, kept for old binaries (memcpy@GLIBC_2.2.5). */
static Elf_Data *versyms(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_GNU_versym)
			return elf_getdata(scn, NULL);
	return NULL;
}

static bool scan_table(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
		       const char *func, struct sym_scan *s)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	Elf_Data *ver = sh->sh_type == SHT_DYNSYM ? versyms(elf) : NULL;
	size_t i, n;

	if (!data || !sh->sh_entsize)
		return false;
	n = data->d_size / sh->sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		int type;

		if (!gelf_getsym(data, i, &sym))
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name || !sym_name_matches(name, func))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type == STT_GNU_IFUNC)
			s->ifunc = true;
		else if (type != STT_FUNC)
			s->other = true;
		else if (sym.st_shndx == SHN_UNDEF || !sym.st_value)
			s->undefined = true;
		else {
			GElf_Versym v = 0;

			s->defined++;
			if (GELF_ST_BIND(sym.st_info) != STB_WEAK)
				s->strong++;
			if (!ver || !gelf_getversym(ver, i, &v) || !(v & 0x8000))
				s->current++;
		}
	}
	return true;
}

int tk_elf_func_check(const char *path, const char *func, char *err,
		      size_t errlen)
{
	static const int types[] = { SHT_DYNSYM, SHT_SYMTAB };
	struct sym_scan s = { 0 };
	bool tables[2] = { false, false };
	int fd, ret, i;
	GElf_Ehdr eh;
	Elf *elf;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return tk_errf(err, errlen, -ENOENT, "%s: %s", path, strerror(errno));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		ret = tk_errf(err, errlen, -ENOEXEC, "%s is not an ELF file", path);
		goto out;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		ret = tk_errf(err, errlen, -ENOEXEC,
			     "%s is not an executable or a shared library", path);
		goto out;
	}
	/* libbpf looks in .dynsym first, then .symtab, and takes the first
	 * table that has it. */
	for (i = 0; i < 2; i++) {
		Elf_Scn *scn = NULL;
		GElf_Shdr sh;

		while ((scn = elf_nextscn(elf, scn)))
			if (gelf_getshdr(scn, &sh) && (int)sh.sh_type == types[i])
				break;
		if (!scn)
			continue;
		tables[i] = scan_table(elf, scn, &sh, func, &s);
		if (s.strong > 1) {
			ret = tk_errf(err, errlen, -ESRCH,
				     "%s is defined %d times in %s (symbol versions), and libbpf cannot choose one",
				     func, s.strong, path);
			goto out;
		}
		/* libbpf would take an old version, which only old programs
		 * call, when the current one is an IFUNC (memcpy): refuse. */
		if (s.defined && (s.current || !s.ifunc)) {
			ret = 0;
			goto out;
		}
		if (s.defined)
			break;
	}
	if (s.ifunc)
		ret = tk_errf(err, errlen, -ESRCH,
			     "%s in %s is a GNU indirect function (IFUNC), whose resolver runs once at load; probe the implementation it selects",
			     func, path);
	else if (s.undefined)
		ret = tk_errf(err, errlen, -ESRCH,
			     "%s is not defined in %s, which imports it from a shared library; give LIB:%s (c:%s for libc)",
			     func, path, func, func);
	else if (s.other)
		ret = tk_errf(err, errlen, -ESRCH, "%s in %s is not a function",
			     func, path);
	else
		ret = tk_errf(err, errlen, -ESRCH, "no function %s in %s (%s)",
			     func, path,
			     tables[1] ? ".dynsym and .symtab" :
			     tables[0] ? "stripped: .dynsym only" :
			     "it has no symbol table");
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

/* ---- kernel functions ---- */

int tk_kernel_func_check(const char *kallsyms, const char *func, char *err,
			 size_t errlen)
{
	FILE *f = tk_proc_fopen(kallsyms);
	char line[512], type = 0;
	size_t n = strlen(func);

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		/* "ffffffff816b89f0 T vfs_read" and "... t fn\t[module]" */
		char *p = strchr(line, ' ');

		if (!p || !p[1] || p[2] != ' ')
			continue;
		if (strncmp(p + 3, func, n) || !strchr("\t\n", p[3 + n]))
			continue;
		type = p[1];
		if (type == 't' || type == 'T')
			break;
	}
	tk_proc_fclose(f);
	if (type == 't' || type == 'T')
		return 0;
	if (type)
		return tk_errf(err, errlen, -ENOENT,
			      "kernel symbol %s is not a function (type '%c' in %s)",
			      func, type, kallsyms);
	return tk_errf(err, errlen, -ENOENT, "no kernel function %s in %s",
		      func, kallsyms);
}

/* ---- the whole spec ---- */

static bool valid_kernel_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '.')
			return false;
	return true;
}

int tk_func_object_resolve(const char *obj, pid_t pid, char *binary,
			   size_t size, char *err, size_t errlen)
{
	char found[PATH_MAX];

	if (strchr(obj, '/')) {
		struct stat st;

		if (stat(obj, &st))
			return tk_errf(err, errlen, -ENOENT, "%s: %s", obj,
				      strerror(errno));
		if (!S_ISREG(st.st_mode))
			return tk_errf(err, errlen, -ENOEXEC,
				      "%s is not a regular file", obj);
		if (size < PATH_MAX || !realpath(obj, binary))
			return tk_errf(err, errlen, -ENOENT, "%s: %s", obj,
				      strerror(errno));
		return 0;
	}
	if (!tk_find_library(obj, pid, found, sizeof(found)) ||
	    !find_program(obj, found, sizeof(found))) {
		/* /proc/PID/root/...: realpath would leave that namespace */
		if (!strncmp(found, "/proc/", 6) || size < PATH_MAX ||
		    !realpath(found, binary))
			copy_path(binary, size, found);
		return 0;
	}
	if (is_file_name(obj))
		return tk_errf(err, errlen, -ENOENT,
			      "no library %s%s in the ld.so cache or the library directories",
			      obj, pid > 0 ? " mapped by the process," : "");
	return tk_errf(err, errlen, -ENOENT,
		      "no library lib%s.so%s in the ld.so cache or the library directories, and no program %s in PATH",
		      strncmp(obj, "lib", 3) ? obj : obj + 3,
		      pid > 0 ? " mapped by the process," : "", obj);
}

int tk_func_target_resolve(const char *spec, pid_t pid,
			   struct tk_func_target *t, char *err, size_t errlen)
{
	const char *colon = strrchr(spec, ':'), *func;
	char obj[PATH_MAX], found[PATH_MAX];
	size_t olen;
	int ret;

	memset(t, 0, sizeof(*t));
	func = colon ? colon + 1 : spec;
	if (!*func || (colon && colon == spec))
		return tk_errf(err, errlen, -EINVAL,
			      "expected FUNC (a kernel function), LIB:FUNC or PATH:FUNC");
	if (strlen(func) >= sizeof(t->func))
		return tk_errf(err, errlen, -EINVAL, "function name too long");
	strcpy(t->func, func);
	if (!colon) {
		if (!valid_kernel_name(func))
			return tk_errf(err, errlen, -EINVAL,
				      "'%s' is not a kernel function name (letters, digits, '_' and '.')",
				      func);
		return tk_kernel_func_check("/proc/kallsyms", func, err, errlen);
	}
	olen = colon - spec;
	if (olen >= sizeof(obj))
		return tk_errf(err, errlen, -EINVAL, "path too long");
	memcpy(obj, spec, olen);
	obj[olen] = 0;
	ret = tk_func_object_resolve(obj, pid, t->binary, sizeof(t->binary),
				     err, errlen);
	if (ret)
		return ret;
	ret = tk_elf_func_check(t->binary, t->func, err, errlen);
	/* libpthread, libdl and librt are empty since glibc 2.34: their
	 * functions moved to libc. */
	if (ret == -ESRCH && !strchr(obj, '/') &&
	    !tk_find_library("c", pid, found, sizeof(found)) &&
	    strcmp(found, t->binary) &&
	    !tk_elf_func_check(found, t->func, NULL, 0)) {
		size_t l = strlen(err);

		snprintf(err + l, errlen - l, "; libc has it: c:%s", t->func);
	}
	return ret;
}
