/* Helpers on a BPF object's data: rodata by variable name, per-CPU sums.
 * The loader with its attach-method chains is in load.c. */
#include "bpf.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int tk_set_rodata(struct bpf_object *obj, const char *var, const void *val,
		  size_t size)
{
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec;
	struct bpf_map *map, *rodata = NULL;
	struct btf *btf = bpf_object__btf(obj);
	size_t data_size;
	char *data;
	int id, i;

	bpf_object__for_each_map(map, obj) {
		const char *n = bpf_map__name(map);
		size_t l = strlen(n);

		if (l >= 7 && !strcmp(n + l - 7, ".rodata"))
			rodata = map;
	}
	if (!rodata || !btf)
		return -ENOENT;
	id = btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC);
	if (id < 0)
		return -ENOENT;
	sec = btf__type_by_id(btf, id);
	/* Writable before load: libbpf 1.1 just declares it const. */
	data = (char *)bpf_map__initial_value(rodata, &data_size);
	if (!data)
		return -EINVAL;
	vs = btf_var_secinfos(sec);
	for (i = 0; i < btf_vlen(sec); i++, vs++) {
		const struct btf_type *t = btf__type_by_id(btf, vs->type);

		if (strcmp(btf__name_by_offset(btf, t->name_off), var))
			continue;
		if (size != vs->size || vs->offset + size > data_size)
			return -EINVAL;
		memcpy(data + vs->offset, val, size);
		return 0;
	}
	return -ENOENT;
}

int tk_percpu_sum(struct bpf_map *map, unsigned key, unsigned long long *sum)
{
	int ncpu = libbpf_num_possible_cpus(), i, err;
	unsigned long long *vals;

	*sum = 0;
	if (ncpu <= 0)
		return ncpu;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	err = bpf_map__lookup_elem(map, &key, sizeof(key), vals,
				   ncpu * sizeof(*vals), 0);
	for (i = 0; !err && i < ncpu; i++)
		*sum += vals[i];
	free(vals);
	return err;
}
