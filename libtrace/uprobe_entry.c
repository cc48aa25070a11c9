/* Entry probes on an instruction the kernel emulates: see uprobe_entry.h. */
#include "uprobe_entry.h"

#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <unistd.h>

#ifdef __x86_64__
/* test r64,r64 with one register (REX.W, 0x85, ModRM mod 3, reg == rm),
 * then jcc rel8 (0x70-0x7f) or jcc rel32 (0x0f 0x80-0x8f). */
static bool self_test_then_jcc(const unsigned char *c)
{
	bool test = (c[0] & 0xfa) == 0x48 && c[1] == 0x85 && (c[2] >> 6) == 3 &&
		    ((c[2] >> 3) & 7) == (c[2] & 7) &&
		    !!(c[0] & 4) == !!(c[0] & 1); /* REX.R == REX.B: same register */

	return test && ((c[3] >= 0x70 && c[3] <= 0x7f) ||
			(c[3] == 0x0f && c[4] >= 0x80 && c[4] <= 0x8f));
}
#endif

unsigned long long tk_uprobe_entry_offset(const char *binary, unsigned long long off)
{
#ifdef __x86_64__
	unsigned char code[5];
	int fd = open(binary, O_RDONLY | O_CLOEXEC);
	bool skip;

	if (fd < 0)
		return off;
	skip = pread(fd, code, sizeof(code), (off_t)off) == (ssize_t)sizeof(code) &&
	       self_test_then_jcc(code);
	close(fd);
	return skip ? off + 3 : off;
#else
	(void)binary;
	return off;
#endif
}

bool tk_uprobe_code_span(const char *binary, unsigned long long off,
			 unsigned long long *below, unsigned long long *above)
{
	int fd = open(binary, O_RDONLY | O_CLOEXEC);
	size_t phnum = 0, i;
	bool found = false;
	Elf *elf;

	*below = *above = 0;
	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && !elf_getphdrnum(elf, &phnum)) {
		for (i = 0; i < phnum && !found; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
			    !(ph.p_flags & PF_X) || off < ph.p_offset ||
			    off >= ph.p_offset + ph.p_filesz)
				continue;
			*below = off - ph.p_offset;
			*above = ph.p_offset + ph.p_filesz - off;
			found = true;
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return found;
}
