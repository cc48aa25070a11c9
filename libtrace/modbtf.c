/* Finding BTF attach targets in kernel modules (modbtf.h). */
#include "modbtf.h"

#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct module_btf {
	__u32 id;
	int fd;
	char name[64];     /* the module's */
	struct btf *btf;   /* split on the base; NULL until needed, or released */
};

static struct module_btf *mods;
static int n_mods = -1;   /* -1: not listed yet */

bool tk_module_btfs_present(void)
{
	DIR *d = opendir("/sys/kernel/btf");
	struct dirent *e;
	bool found = false;

	if (!d)
		return false;
	while (!found && (e = readdir(d)))
		found = e->d_name[0] != '.' && strcmp(e->d_name, "vmlinux");
	closedir(d);
	return found;
}

/* The kernel's BTF objects that are modules', in ID order (load order,
 * as libbpf searches them). */
static void list_modules(void)
{
	__u32 id = 0;
	int cap = 0;

	n_mods = 0;
	while (!bpf_btf_get_next_id(id, &id)) {
		struct bpf_btf_info info = {};
		__u32 len = sizeof(info);
		char name[64] = "";
		int fd = bpf_btf_get_fd_by_id(id);

		if (fd < 0)
			continue;
		info.name = (__u64)(uintptr_t)name;
		info.name_len = sizeof(name);
		if (bpf_obj_get_info_by_fd(fd, &info, &len) || !info.kernel_btf ||
		    !strcmp(name, "vmlinux")) {
			close(fd);
			continue;
		}
		if (n_mods == cap) {
			struct module_btf *m = realloc(mods, (cap ? cap * 2 : 64) * sizeof(*m));

			if (!m) {
				close(fd);
				break;
			}
			mods = m;
			cap = cap ? cap * 2 : 64;
		}
		mods[n_mods] = (struct module_btf){ .id = id, .fd = fd };
		memcpy(mods[n_mods++].name, name, sizeof(name));
	}
}

int tk_module_btf_find(const struct btf *base, const char *name, int kind, int *btf_fd,
		       int *type_id, const char **module)
{
	__u32 first, n, i;
	int k;

	if (!base)
		return -ENOENT;
	if (n_mods < 0)
		list_modules();
	first = btf__type_cnt(base);
	for (k = 0; k < n_mods; k++) {
		struct module_btf *m = &mods[k];

		if (!m->btf) {
			m->btf = btf__load_from_kernel_by_id_split(m->id, (struct btf *)base);
			if (!m->btf)
				continue;   /* unloaded meanwhile */
		}
		n = btf__type_cnt(m->btf);
		for (i = first; i < n; i++) {
			const struct btf_type *t = btf__type_by_id(m->btf, i);

			if (btf_kind(t) == kind &&
			    !strcmp(btf__name_by_offset(m->btf, t->name_off), name)) {
				*btf_fd = m->fd;
				*type_id = i;
				*module = m->name;
				return 0;
			}
		}
	}
	return -ENOENT;
}

void tk_module_btf_release(void)
{
	int k;

	for (k = 0; k < n_mods; k++) {
		btf__free(mods[k].btf);
		mods[k].btf = NULL;
	}
}

void tk_module_btf_forget(void)
{
	int k;

	tk_module_btf_release();
	for (k = 0; k < n_mods; k++)
		close(mods[k].fd);
	n_mods = -1;
}
