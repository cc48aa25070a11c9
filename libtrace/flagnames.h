/* Bit flags and enumerations by name, as strace and bcc print them:
 * "MS_NOSUID|MS_NODEV", leftover bits in hex ("MS_RDONLY|0x40000000"),
 * "0x0" for none. */
#ifndef TK_FLAGNAMES_H
#define TK_FLAGNAMES_H

#include <stddef.h>

/* A name for the value's bits under mask: value == mask for a plain bit;
 * a field (MOUNT_ATTR_NOATIME is 0x10 of the atime field 0x70) or a magic
 * (MS_MGC_VAL, 0xc0ed0000 under 0xffff0000) otherwise. A value of 0
 * never matches. Tables end with { 0 }. */
struct tk_flag_name {
	unsigned long long mask;
	unsigned long long value;
	const char *name;
};

#define TK_FLAG(f) { (f), (f), #f }

/* Write v's names into buf (always NUL-terminated; cut at len). The
 * first entry that matches takes its mask's bits. Returns buf. */
const char *tk_flags_str(char *buf, size_t len, unsigned long long v,
			 const struct tk_flag_name *names);

/* The name whose value is v (an enumeration: fsconfig's command), or
 * NULL. Masks are ignored. */
const char *tk_enum_name(unsigned long long v, const struct tk_flag_name *names);

#endif
