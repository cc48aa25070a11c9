#include "filter.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opts.h"

struct id_list {
	unsigned int ids[TK_FILTER_IDS_MAX];
	size_t n;
};

static struct id_list tgids, tids;

void tk_filter_set_ids(int which, const char *option, const char *arg)
{
	struct id_list *list = which == 'p' ? &tgids : &tids;
	int *single = which == 'p' ? &tk_opts.filter.tgid : &tk_opts.filter.tid;
	char *copy = strdup(arg), *tok, *save = NULL;
	size_t i;

	if (!copy)
		exit(1);
	list->n = 0;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long v;
		unsigned int id;

		if (!strchr(arg, ','))  /* one id: the error of any integer */
			v = tk_arg_long(option, arg, 1, INT_MAX);
		errno = 0;
		v = strtol(tok, &end, 10);
		if (errno || *end || end == tok || v < 1 || v > INT_MAX)
			tk_usage_error("invalid %s value '%s': '%s' is not an id from 1 to %d (expected 1,2,3)",
				       option, arg, tok, INT_MAX);
		id = v;

		for (i = 0; i < list->n && list->ids[i] != id; i++)
			;
		if (i < list->n)
			continue;   /* "1,1": once is enough */
		if (list->n == TK_FILTER_IDS_MAX)
			tk_usage_error("invalid %s value: more than %d ids",
				       option, TK_FILTER_IDS_MAX);
		list->ids[list->n++] = id;
	}
	/* strtok skips empty fields: "1,,2" and ",1" must not pass. */
	if (!list->n || strstr(arg, ",,") || arg[0] == ',' ||
	    arg[strlen(arg) - 1] == ',')
		tk_usage_error("invalid %s value '%s': expected an id or a comma-separated list (1,2,3)",
			       option, arg);
	free(copy);
	*single = list->n == 1 ? (int)list->ids[0] : TK_FILTER_LIST;
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

int tk_filter_prepare(struct bpf_object *obj)
{
	int err = size_ids(obj, "tk_filter_tgids", &tgids);

	return err ? err : size_ids(obj, "tk_filter_tids", &tids);
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
	return err;
}
