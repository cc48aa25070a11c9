/* Histogram bucket helpers. */
#ifndef TK_BITS_BPF_H
#define TK_BITS_BPF_H

/* floor(log2(v)) for v > 0; 0 for v == 0. Branch-free halving. */
static __always_inline u32 tk_log2(u64 v)
{
	u32 r, shift;

	r = (v > 0xFFFFFFFFULL) << 5; v >>= r;
	shift = (v > 0xFFFF) << 4; v >>= shift; r |= shift;
	shift = (v > 0xFF) << 3; v >>= shift; r |= shift;
	shift = (v > 0xF) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	r |= (v >> 1);
	return r;
}

/* The bucket of v in bcc's log2 histograms: bucket 0 holds 0 and 1,
 * bucket b > 0 holds [2^b, 2^(b+1) - 1]. */
static __always_inline u32 tk_log2_slot(u64 v)
{
	return tk_log2(v);
}

#endif
