/* USDT probes (SystemTap SDT notes, <sys/sdt.h>'s DTRACE_PROBE) of an ELF
 * file: each is an ELF note of owner "stapsdt", type 3, in the section
 * .note.stapsdt, whose description is
 *
 *   pc, base, semaphore   three addresses (8 bytes in ELF64, 4 in ELF32)
 *   provider\0 name\0 args\0
 *
 * pc is the probe's nop; base is the link-time address of the section
 * .stapsdt.base, so that a prelinked file's pc can be corrected by the
 * section's actual address; semaphore is 0 or the address of a 16-bit
 * counter the probe site tests (a tracer increments it to enable the
 * probe); args is the argument spec, "8@%rbx -4@-20(%rbp)": per argument
 * SIZE@LOCATION, negative SIZE for signed. */
#ifndef TK_USDT_H
#define TK_USDT_H

#include <stdbool.h>
#include <stddef.h>

#define TK_USDT_NOTE_TYPE 3

struct tk_usdt_probe {
	const char *provider, *name, *args;  /* into strings */
	unsigned long long pc;    /* as the note gives it */
	unsigned long long base;  /* the note's .stapsdt.base address */
	unsigned long long sema;  /* 0: none */
	unsigned long long addr;  /* pc corrected by .stapsdt.base */
	char *strings;            /* provider, name and args; malloc'd */
};

/* Parse one note description (desc, len bytes; elf64: 8-byte addresses)
 * into p (addr = pc). 0, -EINVAL when it is malformed (short, a string
 * without its NUL, an empty provider or name), or -ENOMEM. */
int tk_usdt_note_parse(const void *desc, size_t len, bool elf64,
		       struct tk_usdt_probe *p);

/* Every USDT probe of ELF file path, in file order, into *out (*n of
 * them; none: 0 and *out NULL). 0, or -ENOENT / -ENOEXEC / -EINVAL /
 * -ENOMEM with one line in err. */
int tk_usdt_list(const char *path, struct tk_usdt_probe **out, size_t *n,
		 char *err, size_t errlen);

void tk_usdt_free(struct tk_usdt_probe *v, size_t n);

#endif
