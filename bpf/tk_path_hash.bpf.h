/* A 64-bit hash of a path in a buffer, the key of a map whose keys would
 * otherwise be PATH_MAX strings (a hash map's key is at most 512 bytes).
 * Eight bytes per step (FNV-1a's step on words): 512 steps at most, so
 * that the verifier's walk through the loop stays short. Two paths
 * sharing a hash are one key: at 2^-64 per pair, no concern for a map
 * of thousands. */
#ifndef TK_PATH_HASH_BPF_H
#define TK_PATH_HASH_BPF_H

#define TK_PATH_HASH_PRIME 0x100000001b3ULL

/* The hash of len bytes of buf from off (len <= 4095, off <= 4096). buf
 * must be a map value with 4096 + 8 bytes from any off & 4095: the masks
 * show the verifier every read in bounds; bytes past len are masked off. */
static __always_inline u64 tk_path_hash(const char *buf, u32 off, u32 len)
{
	u64 h = 0xcbf29ce484222325ULL, w;
	u32 i;

	for (i = 0; i < 512; i++) {
		if (i * 8 >= len)
			break;
		w = *(const u64 *)(buf + ((off + i * 8) & 4095));
		if (len - i * 8 < 8)
			w &= (1ULL << ((len - i * 8) * 8)) - 1;
		h = (h ^ w) * TK_PATH_HASH_PRIME;
	}
	return h ^ len;
}

#endif
