/* Reading a string from user memory with the same answer on every
 * kernel. bpf_probe_read_user_str returns the length with the NUL, so 1
 * for "", but older kernels' strncpy_from_user_nofault return 0 for ""
 * (5.10, 6.1 and 6.12 in the kernel matrix; 6.18 returns 1): taken for a
 * failure, glibc's fstat (newfstatat(fd, "", AT_EMPTY_PATH)) or an open
 * of "" would show an unreadable path there. */
#ifndef TK_USER_STR_BPF_H
#define TK_USER_STR_BPF_H

#include <bpf/bpf_helpers.h>

/* As bpf_probe_read_user_str: bytes copied with the NUL (1 for ""), or
 * < 0 when src cannot be read. */
static __always_inline long tk_read_user_str(void *dst, u32 size,
					     const void *src)
{
	long n = bpf_probe_read_user_str(dst, size, src);

	return n ? n : 1;   /* 0 only for "", whose NUL was copied */
}

#endif
