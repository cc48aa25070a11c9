/* Helpers on a BPF object's data: rodata by variable name, per-CPU sums.
 * The loader with its attach-method chains is in load.c. */
#include "bpf.h"
#include "tracekit.h"

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

unsigned long long tk_runs_missed(struct bpf_object *obj)
{
	unsigned long long sum = 0;
	struct bpf_program *prog;

	if (!obj)
		return 0;
	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		/* A kernel before 5.12 has no such field: it stays 0. */
		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
			sum += info.recursion_misses;
	}
	return sum;
}

bool tk_task_storage_usable(void)
{
	static int usable = -1;
	static const enum bpf_prog_type types[] = {
		BPF_PROG_TYPE_TRACEPOINT, BPF_PROG_TYPE_RAW_TRACEPOINT,
	};

	if (usable < 0) {
		usable = 1;
		/* The map type came for LSM programs (5.11); tracing
		 * programs were let use it later: ask for the helpers. */
		for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (libbpf_probe_bpf_helper(types[i], BPF_FUNC_task_storage_get, NULL) != 1 ||
			    libbpf_probe_bpf_helper(types[i], BPF_FUNC_get_current_task_btf, NULL) != 1)
				usable = 0;
	}
	return usable;
}

int tk_pending_prepare(struct bpf_object *obj)
{
	struct bpf_map *task = bpf_object__find_map_by_name(obj, "tk_pending_task");
	struct bpf_map *tid = bpf_object__find_map_by_name(obj, "tk_pending_tid");
	bool in_task;
	int err;

	if (!task || !tid)
		return 0;
	in_task = tk_task_storage_usable();
	tk_info("per-thread syscall state in %s",
		in_task ? "task storage" : "a hash by thread id (no task storage for tracing)");
	err = tk_set_rodata(obj, "tk_pending_in_task", &in_task, sizeof(in_task));
	if (!err && in_task && getenv("TRACEKIT_PENDING_SPILL_ALL")) {
		bool all = true;  /* tests of the spill path */

		tk_info("every entry's state spilled to the hash (TRACEKIT_PENDING_SPILL_ALL)");
		err = tk_set_rodata(obj, "tk_pending_spill_all", &all, sizeof(all));
	}
	if (!err)
		err = bpf_map__set_autocreate(task, in_task);
	/* In task mode the hash holds only what task storage refused. */
	if (!err && in_task)
		err = bpf_map__set_max_entries(tid, 1024);
	return err;
}
