#include "mapread.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Every entry of map to fn(key, vals, ctx), where vals is nval values
 * of vsize bytes: in batches (a few bpf() calls rather than two per
 * entry), else one by one (before 5.6, or where the map type has no
 * batch operations). */
static int read_entries(struct bpf_map *map, int nval, size_t vsize,
			void (*fn)(const void *key, const char *vals, void *ctx),
			void *ctx)
{
	enum { CHUNK = 256 };
	int fd = bpf_map__fd(map), err = 0;
	size_t ksize = bpf_map__key_size(map), max = bpf_map__max_entries(map);
	char *keys = calloc(CHUNK + 1, ksize), *vals = calloc((size_t)CHUNK * nval, vsize);
	char batch[512], *last = NULL;  /* a batch token is a key (at most 512 bytes) */
	bool first = true, no_batch = false;
	size_t seen = 0;
	unsigned n, i;
	int saved = 0;  /* errno of the call that ended the reading */

	if (!keys || !vals || ksize > sizeof(batch)) {
		err = -ENOMEM;
		goto out;
	}
	while (seen < max) {
		n = CHUNK;
		err = bpf_map_lookup_batch(fd, first ? NULL : batch, batch, keys,
					   vals, &n, NULL);
		saved = err ? errno : 0;
		/* No batch ops for this map type on this kernel (5.10's
		 * per-CPU arrays: ENOTSUPP, 524) or none at all (EINVAL). */
		if (err && first && (saved == EINVAL || saved == 524 ||
				     saved == EOPNOTSUPP)) {
			no_batch = true;
			break;
		}
		first = false;
		for (i = 0; i < n && seen < max; i++, seen++)
			fn(keys + (size_t)i * ksize, vals + (size_t)i * nval * vsize, ctx);
		if (err)
			break;
	}
	while (no_batch && seen < max) {
		err = bpf_map_get_next_key(fd, last, keys);
		saved = err ? errno : 0;
		if (err)
			break;
		memcpy(keys + ksize, keys, ksize);
		last = keys + ksize;
		if (!bpf_map_lookup_elem(fd, keys, vals)) {
			fn(keys, vals, ctx);
			seen++;
		}
	}
	err = err && saved != ENOENT ? -saved : 0;
out:
	free(keys);
	free(vals);
	return err;
}

struct percpu_read {
	tk_percpu_entry_fn fn;
	void *ctx;
	int ncpu;
	size_t vsize;
};

static void percpu_entry(const void *key, const char *vals, void *ctx)
{
	struct percpu_read *r = ctx;

	r->fn(key, vals, r->ncpu, r->vsize, r->ctx);
}

int tk_percpu_map_read(struct bpf_map *map, tk_percpu_entry_fn fn, void *ctx)
{
	struct percpu_read r = {
		.fn = fn, .ctx = ctx, .ncpu = libbpf_num_possible_cpus(),
		.vsize = (bpf_map__value_size(map) + 7) & ~7ul,
	};

	if (r.ncpu < 0)
		return r.ncpu;
	return read_entries(map, r.ncpu, r.vsize, percpu_entry, &r);
}

int tk_map_read(struct bpf_map *map, tk_entry_fn fn, void *ctx)
{
	return read_entries(map, 1, bpf_map__value_size(map), fn, ctx);
}

struct deltas_read {
	struct tk_deltas *d;
	char *cur;
	size_t n, max;
};

static void deltas_add(const void *key, const char *vals, int ncpu, size_t vsize,
		       void *ctx)
{
	struct deltas_read *r = ctx;
	char *row;

	if (r->n == r->max)
		return;
	row = r->cur + r->n++ * r->d->row_size;
	memset(row, 0, r->d->row_size);
	memcpy(row, key, r->d->key_size);
	r->d->sum(row, vals, ncpu, vsize);
}

static int by_key(const void *a, const void *b, void *key_size)
{
	return memcmp(a, b, *(size_t *)key_size);
}

/* The row of prev with row's key, or NULL (prev is sorted by key). */
static const char *prev_row(const struct tk_deltas *d, const char *row)
{
	size_t lo = 0, hi = d->n_prev;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *p = d->prev + mid * d->row_size;
		int c = memcmp(row, p, d->key_size);

		if (!c)
			return p;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

long tk_deltas_read(struct tk_deltas *d, void *out)
{
	struct deltas_read r = { .d = d, .max = bpf_map__max_entries(d->map) };
	char *rows = out, *row, *delta;
	size_t i, n = 0, kept = 0, key_size = d->key_size;
	bool array = bpf_map__type(d->map) == BPF_MAP_TYPE_PERCPU_ARRAY;
	int err;

	r.cur = malloc(r.max * d->row_size);
	if (!r.cur)
		return -ENOMEM;
	err = tk_percpu_map_read(d->map, deltas_add, &r);
	if (err) {
		free(r.cur);
		return err;
	}
	qsort_r(r.cur, r.n, d->row_size, by_key, &key_size);
	for (i = 0; i < r.n; i++) {
		row = r.cur + i * d->row_size;
		delta = rows + n * d->row_size;
		memcpy(delta, row, d->row_size);
		if (d->minus(delta, prev_row(d, row))) {
			n++;
		} else if (!array) {
			bpf_map__delete_elem(d->map, row, d->key_size, 0);
			continue;
		}
		/* An array's entries stay, totals and all: each is kept
		 * as the base of its next difference. */
		memmove(r.cur + kept++ * d->row_size, row, d->row_size);
	}
	free(d->prev);
	d->prev = r.cur;
	d->n_prev = kept;
	return n;
}

/* Set once the kernel refuses lookup-and-delete on a hash map. */
static bool take_and_delete_unsupported;

int tk_map_take_all(struct bpf_map *map, void *out, size_t stride,
		    size_t val_off, int max)
{
	int fd = bpf_map__fd(map), n = 0, i, kept = 0;
	char *rec = out, *prev = NULL;

	while (n < max && !bpf_map_get_next_key(fd, prev, rec + (size_t)n * stride)) {
		prev = rec + (size_t)n * stride;
		n++;
	}
	for (i = 0; i < n; i++) {
		char *r = rec + (size_t)i * stride;

		/* One call where the kernel can (a hash map since 5.14): a
		 * BPF add that lands between a lookup and a delete is lost,
		 * and that window is a system call wide; with this, only an
		 * add by a program that looked the entry up before the
		 * delete is. */
		if (!take_and_delete_unsupported) {
			if (!bpf_map_lookup_and_delete_elem(fd, r, r + val_off))
				goto taken;
			if (errno == ENOENT)
				continue;
			take_and_delete_unsupported = true;
		}
		if (bpf_map_lookup_elem(fd, r, r + val_off))
			continue;
		bpf_map_delete_elem(fd, r);
taken:
		if (kept != i)
			memmove(rec + (size_t)kept * stride, r, stride);
		kept++;
	}
	return kept;
}

int tk_percpu_slots_delta(struct bpf_map *map, unsigned key, int n, bool per_cpu,
			  unsigned long long *last, unsigned long long *diff)
{
	size_t vsize = (bpf_map__value_size(map) + 7) & ~(size_t)7;
	int ncpu = libbpf_num_possible_cpus(), c, s, err, m;
	char *vals;

	if (ncpu < 0)
		return ncpu;
	if (vsize < n * sizeof(*diff))
		return -EINVAL;
	vals = calloc(ncpu, vsize);
	if (!vals)
		return -ENOMEM;
	err = bpf_map__lookup_elem(map, &key, sizeof(key), vals, ncpu * vsize, 0);
	if (!err) {
		m = per_cpu ? ncpu * n : n;
		memset(diff, 0, m * sizeof(*diff));
		for (c = 0; c < ncpu; c++) {
			const unsigned long long *v = (const void *)(vals + c * vsize);

			for (s = 0; s < n; s++)
				diff[(per_cpu ? c * n : 0) + s] += v[s];
		}
		for (s = 0; s < m; s++) {
			unsigned long long now = diff[s];

			diff[s] = now - last[s];
			last[s] = now;
		}
	}
	free(vals);
	return err;
}
