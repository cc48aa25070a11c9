/* Reading whole BPF maps from userspace. */
#ifndef TK_MAPREAD_H
#define TK_MAPREAD_H

#include <bpf/libbpf.h>
#include <stdbool.h>
#include <stddef.h>

/* One entry of a per-CPU map: ncpu values of vsize bytes each (the value
 * size rounded up to 8, as the kernel lays them out). */
typedef void (*tk_percpu_entry_fn)(const void *key, const char *vals,
				   int ncpu, size_t vsize, void *ctx);

/* Call fn for each entry of the per-CPU map, in batches: a few bpf()
 * calls rather than two per entry (one per entry before 5.6, or where
 * the map type has no batch operations). 0, or -errno. */
int tk_percpu_map_read(struct bpf_map *map, tk_percpu_entry_fn fn, void *ctx);

/* Call fn for each entry of a map that is not per-CPU, in batches as
 * above. The map may change while it is read: a batch is a bucket's
 * entries at once (no entry twice); one by one, an entry deleted under
 * the walk restarts it, and the caller sees entries again. */
typedef void (*tk_entry_fn)(const void *key, const char *val, void *ctx);
int tk_map_read(struct bpf_map *map, tk_entry_fn fn, void *ctx);

/* Per-interval counts from a per-CPU hash of running totals that BPF only
 * adds to (filetop, slabratetop, hardirqs), or a per-CPU array of them
 * (softirqs): each read gives what grew since the last one; from a hash
 * it removes the keys that did not grow (an add between the read and
 * the removal is lost), an array keeps them all. A row is row_size bytes
 * with the key (key_size bytes) at offset 0. */
struct tk_deltas {
	struct bpf_map *map;
	size_t key_size, row_size;
	/* Fill row (its key already copied in) from the entry's values. */
	void (*sum)(void *row, const char *vals, int ncpu, size_t vsize);
	/* row -= prev (the same key's row at the last read; NULL for a
	 * new key); false when nothing grew. */
	bool (*minus)(void *row, const void *prev);
	/* Kept between reads: zero them before the first. */
	char *prev;
	size_t n_prev;
};

/* The rows that grew since the last read into out (room for the map's
 * max_entries rows); how many, or -errno. */
long tk_deltas_read(struct tk_deltas *d, void *out);

/* Take every entry out of a hash map (per-interval counts): each key and
 * value into out[i], an array of max records of stride bytes with the
 * key at offset 0 and the value at val_off, and delete it. An entry
 * that vanished between the walk and its read is dropped. Returns how
 * many were taken. */
int tk_map_take_all(struct bpf_map *map, void *out, size_t stride,
		    size_t val_off, int max);

/* Histograms kept per CPU in an array (cpudist, runqlat, runqlen): the n
 * counters (unsigned long long) at the start of entry key's value, less
 * their values at the last call, into diff; BPF only adds to them, so
 * nothing is lost to a clear. Summed over the CPUs (last and diff hold n
 * counters), or per_cpu CPU by CPU (libbpf_num_possible_cpus() times n:
 * CPU c's at c * n). last is zero before the first call. 0, or -errno. */
int tk_percpu_slots_delta(struct bpf_map *map, unsigned key, int n, bool per_cpu,
			  unsigned long long *last, unsigned long long *diff);

#endif
