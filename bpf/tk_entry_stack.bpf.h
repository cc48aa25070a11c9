/* A kernel stack taken by a kprobe on a function's first instruction,
 * with the function's caller in it on every architecture.
 *
 * arm64's kernel unwinder starts such a stack at the probed pc and walks
 * on from the frame record x29 points to: at the first instruction that
 * is still the caller's own record, whose return address leads into the
 * caller's caller. The caller's return address is in the link register
 * (x30) only, and the stack lacks it (Debian's arm64 6.1, where klockstat
 * has kprobes only: mutex_lock's caller pipe_write was missing, so its
 * waits and holds were counted under vfs_write). x86-64's unwinder reads
 * the return address at the top of the stack, and has the caller. */
#ifndef TK_ENTRY_STACK_BPF_H
#define TK_ENTRY_STACK_BPF_H

#include <bpf/bpf_tracing.h>

/* frames[0..n): a stack bpf_get_stack took in a kprobe on a function's
 * entry (frames[0] its pc); on arm64 the link register goes in as
 * frames[1] when it is not there, the rest moving out by one. */
static __always_inline void tk_entry_stack_fix(struct pt_regs *regs, unsigned long long *frames,
					       const int n)
{
#if defined(__TARGET_ARCH_arm64)
	unsigned long long lr = PT_REGS_RET(regs);
	int i;

	if (!frames[0] || !lr || frames[1] == lr)
		return;
	for (i = n - 1; i > 1; i--)
		frames[i] = frames[i - 1];
	frames[1] = lr;
#else
	(void)regs;
	(void)frames;
	(void)n;
#endif
}

/* The same call's kretprobe: frames[1] made the return address the
 * kernel recovered, which a kretprobe's registers hold as the pc. At
 * the entry the link register may already have been the kretprobe's
 * trampoline: kprobes at one address run newest first, and a tool's
 * kretprobe, attached after its entry kprobe, replaces the link
 * register before the entry program reads it (klockstat's holds on
 * arm64 6.1 were all under __kretprobe_trampoline). */
static __always_inline void tk_entry_stack_fix_return(struct pt_regs *regs,
						      unsigned long long *frames)
{
#if defined(__TARGET_ARCH_arm64)
	if (frames[0] && PT_REGS_IP(regs))
		frames[1] = PT_REGS_IP(regs);
#else
	(void)regs;
	(void)frames;
#endif
}

#endif
