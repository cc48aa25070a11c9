#include "names.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum tk_arch tk_arch_native(void)
{
#if defined(__aarch64__)
	return TK_ARCH_ARM64;
#else
	return TK_ARCH_X86_64;
#endif
}

static const struct tk_syscall_entry *table_of(enum tk_arch arch)
{
	return arch == TK_ARCH_ARM64 ? tk_syscalls_arm64 : tk_syscalls_x86_64;
}

const char *tk_syscall_name(enum tk_arch arch, long nr)
{
	const struct tk_syscall_entry *t = table_of(arch);
	size_t lo = 0, hi = 0;

	while (t[hi].name)
		hi++;
	while (lo < hi) {  /* tables are sorted by number */
		size_t mid = lo + (hi - lo) / 2;

		if (t[mid].nr == nr)
			return t[mid].name;
		if (t[mid].nr < nr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const char *tk_syscall_name_or_nr(enum tk_arch arch, long nr, char *buf,
				  unsigned len)
{
	const char *name = tk_syscall_name(arch, nr);

	if (name)
		return name;
	snprintf(buf, len, "%ld", nr);
	return buf;
}

long tk_syscall_nr(enum tk_arch arch, const char *name)
{
	const struct tk_syscall_entry *t;

	for (t = table_of(arch); t->name; t++)
		if (!strcmp(t->name, name))
			return t->nr;
	return -1;
}

/* linux/capability.h's CAP_* numbers, in order (tests/unit/test_names.c
 * checks them against the header). */
static const char *const cap_names[] = {
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER",
	"CAP_FSETID", "CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP",
	"CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST",
	"CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER",
	"CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE",
	"CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
	"CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD",
	"CAP_LEASE", "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP",
	"CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM",
	"CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF",
	"CAP_CHECKPOINT_RESTORE",
};

const char *tk_cap_name(int cap)
{
	if (cap < 0 || cap >= (int)(sizeof(cap_names) / sizeof(cap_names[0])))
		return NULL;
	return cap_names[cap];
}

/* The kernel's internal "not supported" (include/linux/errno.h), which
 * glibc does not know: bpf(2) returns it for a program or attach type
 * this kernel's architecture or configuration lacks (fentry on arm64
 * before 6.0), and libbpf passes it on. */
#define TK_ENOTSUPP 524

const char *tk_errno_name(int err)
{
	if (err < 0)
		err = -err;
	if (err == TK_ENOTSUPP)
		return "ENOTSUPP";
	return strerrorname_np(err);
}

const char *tk_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err == TK_ENOTSUPP)
		return "Not supported by this kernel";
	return strerror(err);
}

int tk_errno_parse(const char *s)
{
	char *end;
	long v;
	int e;

	if (!s || !*s)
		return -1;
	if (isdigit((unsigned char)*s)) {
		v = strtol(s, &end, 10);
		return (*end || v <= 0 || v > 4095) ? -1 : (int)v;
	}
	/* Names glibc maps to another errno's name. */
	if (!strcasecmp(s, "EWOULDBLOCK"))
		return EAGAIN;
	if (!strcasecmp(s, "EDEADLOCK"))
		return EDEADLK;
	if (!strcasecmp(s, "ENOTSUP"))
		return EOPNOTSUPP;
	for (e = 1; e < 4096; e++) {
		const char *name = tk_errno_name(e);

		if (name && !strcasecmp(name, s))
			return e;
	}
	return -1;
}
