/* -s SIGNALS of the signal tools (killsnoop, sigsnoop): the set libtrace
 * parsed (tk_signal_list_parse) in rodata, bit n for signal n. */
#ifndef TK_SIGNAL_BPF_H
#define TK_SIGNAL_BPF_H

const volatile bool sig_filter = false;       /* -s given */
const volatile __u64 sig_mask[2] = { 0, 0 };

/* Is sig asked for? Without -s every one is, invalid numbers (a call
 * that fails with EINVAL) too; with it, only those in the set. Two
 * constant-index reads: a variable index loses its bound on the way
 * to the verifier. */
static __always_inline bool tk_signal_wanted(int sig)
{
	if (!sig_filter)
		return true;
	if ((__u32)sig > 64)
		return false;
	if (sig < 64)
		return (sig_mask[0] >> sig) & 1;
	return sig_mask[1] & 1;
}

#endif
