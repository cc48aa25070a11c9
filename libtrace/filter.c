#include "filter.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf.h"
#include "opts.h"

struct id_list {
	unsigned int ids[TK_FILTER_IDS_MAX];
	size_t n;
};

static struct id_list tgids, tids;

struct ids_arg {
	const char *option, *arg;
	struct id_list *list;
};

static void add_id(const char *item, void *ctx)
{
	const struct ids_arg *a = ctx;
	struct id_list *list = a->list;
	char *end;
	long v;
	size_t i;

	errno = 0;
	v = strtol(item, &end, 10);
	if (errno || *end || end == item || v < 1 || v > INT_MAX)
		tk_usage_error("invalid %s value '%s': '%s' is not an id from 1 to %d (expected 1,2,3)",
			       a->option, a->arg, item, INT_MAX);
	for (i = 0; i < list->n && list->ids[i] != (unsigned int)v; i++)
		;
	if (i < list->n)
		return;   /* "1,1": once is enough */
	if (list->n == TK_FILTER_IDS_MAX)
		tk_usage_error("invalid %s value: more than %d ids", a->option,
			       TK_FILTER_IDS_MAX);
	list->ids[list->n++] = v;
}

void tk_filter_set_ids(int which, const char *option, const char *arg)
{
	struct ids_arg a = { option, arg, which == 'p' ? &tgids : &tids };
	int *single = which == 'p' ? &tk_opts.filter.tgid : &tk_opts.filter.tid;

	a.list->n = 0;
	if (!strchr(arg, ','))  /* one id: the error of any integer */
		a.list->ids[a.list->n++] = tk_arg_long(option, arg, 1, INT_MAX);
	else
		tk_arg_list(option, arg, "an id or a comma-separated list (1,2,3)",
			    add_id, &a);
	*single = a.list->n == 1 ? (int)a.list->ids[0] : TK_FILTER_LIST;
}

int tk_filter_attach_pid(void)
{
	const struct tk_filter *f = &tk_opts.filter;

	if (f->tgid > 0)
		return f->tgid;
	if (f->tgid == 0 && f->tid > 0)
		return f->tid;
	return -1;
}

static int size_ids(struct bpf_object *obj, const char *name,
		    const struct id_list *list)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, name);

	if (!map || list->n < 2)
		return 0;
	return bpf_map__set_max_entries(map, list->n);
}

static int follow_fd = -1;

int tk_filter_prepare(struct bpf_object *obj)
{
	struct bpf_map *follow = bpf_object__find_map_by_name(obj, "tk_follow_tgids");
	int err = size_ids(obj, "tk_filter_tgids", &tgids);

	if (!err)
		err = size_ids(obj, "tk_filter_tids", &tids);
	/* The fork follower costs a program on every fork and exit: only
	 * when -- COMMAND runs without a cgroup. */
	if (!tk_opts.filter.follow)
		tk_programs_off(obj, "tk_follow_");
	else if (!err && follow)
		err = bpf_map__set_max_entries(follow, TK_FOLLOW_MAX);
	return err;
}

int tk_filter_follow_pid(int pid)
{
	unsigned int key = pid;
	unsigned char one = 1;

	if (follow_fd < 0)
		return -ENOENT;
	return bpf_map_update_elem(follow_fd, &key, &one, BPF_ANY) ? -errno : 0;
}

static int fill_ids(struct bpf_object *obj, const char *name,
		    const struct id_list *list)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, name);
	unsigned char one = 1;
	size_t i;
	int err;

	if (list->n < 2)
		return 0;
	if (!map)
		return -ENOENT;
	for (i = 0; i < list->n; i++) {
		err = bpf_map__update_elem(map, &list->ids[i], sizeof(list->ids[i]),
					   &one, sizeof(one), BPF_ANY);
		if (err)
			return err;
	}
	return 0;
}

static int fill_cgroup(struct bpf_object *obj)
{
	struct bpf_map *map;
	int fd, err, key = 0;

	if (!tk_opts.cgroup_path)
		return 0;
	map = bpf_object__find_map_by_name(obj, "tk_cgroup");
	if (!map)
		return -ENOENT;
	fd = open(tk_opts.cgroup_path, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return -errno;
	err = bpf_map__update_elem(map, &key, sizeof(key), &fd, sizeof(fd), 0);
	close(fd);
	return err;
}

int tk_filter_after_load(struct bpf_object *obj)
{
	int err = fill_cgroup(obj);

	if (!err)
		err = fill_ids(obj, "tk_filter_tgids", &tgids);
	if (!err)
		err = fill_ids(obj, "tk_filter_tids", &tids);
	if (!err && tk_opts.filter.follow) {
		struct bpf_map *map = bpf_object__find_map_by_name(obj, "tk_follow_tgids");

		if (!map)
			return -ENOENT;
		follow_fd = bpf_map__fd(map);
	}
	return err;
}

bool tk_filter_any(void)
{
	const struct tk_filter *f = &tk_opts.filter;

	return f->tgid || f->tid || f->uid >= 0 || f->use_cgroup || f->comm[0] ||
	       f->ppid || f->follow;
}
