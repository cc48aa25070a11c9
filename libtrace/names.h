/* Syscall, errno and signal names. */
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

/* "ENOENT" for 2; NULL when unknown. Sign ignored. */
const char *tk_errno_name(int err);

/* Errno number of "ENOENT", "enoent" or "2"; -1 when unknown. */
int tk_errno_parse(const char *s);

/* The kernel's signal numbers: 1-64 (0: a kill() that only checks). */
#define TK_SIG_MAX 64

/* "KILL" for 9 (glibc's sigabbrev_np, without "SIG"); NULL for a number
 * glibc has no name of (the real-time ones, 32-64). */
const char *tk_signal_name(int sig);

/* A signal's number from "9", "KILL", "SIGKILL" or "sigkill" (0-64);
 * -1 when it is none. */
int tk_signal_parse(const char *s);

/* A comma-separated list of those (-s 9,TERM) into mask: bit n of
 * mask[n / 64]. 0, or -1 with *bad at the item that is no signal. */
int tk_signal_list_parse(const char *s, unsigned long long mask[2], const char **bad);

#endif
