// SPDX-License-Identifier: GPL-2.0
/* Kernel addresses named by the kernel's own lookup: a syscall program
 * (Linux 5.14; run with BPF_PROG_TEST_RUN) prints addr with bpf_snprintf's "%pB" (5.13), as a kernel backtrace names a return
 * address. libtrace/ksymbpf.c runs it, so that a tool with a few kernel
 * frames to name does not read and parse all of /proc/kallsyms (30 ms
 * of kernel time for 120k lines on this machine, against 1.4 ms to load
 * this and name a frame). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "ksym.h"

__u64 addr;
char out[TK_KSYM_LEN];

SEC("syscall")
int ksym_name(void *ctx)
{
	__u64 arg[1] = { addr };

	bpf_snprintf(out, sizeof(out), "%pB", arg, sizeof(arg));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
