/* Histogram bucket helpers, and clamping an index for the verifier. */
#ifndef TK_BITS_BPF_H
#define TK_BITS_BPF_H

/* Clamp v to at most max in a way the verifier sees on the very register
 * that is used next: clang otherwise checks a copy and passes the
 * original, which verifiers before 6.12 (5.10, 6.1) call unbounded. */
#define tk_bound(v, max)                                                   \
	asm volatile("if %0 <= %1 goto +1; %0 = %1" : "+r"(v) : "i"(max))

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

/* tk_log2(ns / unit) without the division (a 64-bit division costs
 * tens of ns on a hot path), for unit in [2^k, 2^(k+1)): log2(ns / unit)
 * is log2(ns) - k or one less, the first when ns >= unit << that. */
static __always_inline u32 tk_log2_div(u64 ns, u64 unit, u32 k)
{
	u32 c;

	if (ns < 2 * unit)   /* ns / unit is 0 or 1 */
		return 0;
	c = tk_log2(ns);     /* >= k + 1 */
	return ns >= unit << (c - k) ? c - k : c - k - 1;
}

/* The bucket of v in bcc's log2 histograms: bucket 0 holds 0 and 1,
 * bucket b > 0 holds [2^b, 2^(b+1) - 1]. */
static __always_inline u32 tk_log2_slot(u64 v)
{
	return tk_log2(v);
}

#endif
