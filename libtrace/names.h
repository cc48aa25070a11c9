/* Syscall, errno and capability names. */
#ifndef TK_NAMES_H
#define TK_NAMES_H

enum tk_arch { TK_ARCH_X86_64, TK_ARCH_ARM64 };

struct tk_syscall_entry {
	int nr;
	const char *name;
};

/* Generated tables, sorted by number, ended by { -1, 0 }. */
extern const struct tk_syscall_entry tk_syscalls_x86_64[];
extern const struct tk_syscall_entry tk_syscalls_arm64[];

/* The architecture this binary was built for. */
enum tk_arch tk_arch_native(void);

/* Name of syscall nr, or NULL when the headers did not know it. */
const char *tk_syscall_name(enum tk_arch arch, long nr);

/* Name of nr, or its number in decimal in buf when unknown. */
const char *tk_syscall_name_or_nr(enum tk_arch arch, long nr, char *buf,
				  unsigned len);

/* Number of a named syscall, or -1. */
long tk_syscall_nr(enum tk_arch arch, const char *name);

/* "ENOENT" for 2, "ENOTSUPP" for the kernel's internal 524; NULL when
 * unknown. Sign ignored. */
const char *tk_errno_name(int err);

/* strerror(), and a text for the kernel's internal ENOTSUPP (524) where
 * glibc says "Unknown error 524". Sign ignored. */
const char *tk_strerror(int err);

/* Errno number of "ENOENT", "enoent" or "2"; -1 when unknown. */
int tk_errno_parse(const char *s);

/* "CAP_CHOWN" for 0, as linux/capability.h names them (to
 * CAP_CHECKPOINT_RESTORE, 40: the last from 5.9 to 6.18); NULL when
 * unknown. */
const char *tk_cap_name(int cap);

#endif
