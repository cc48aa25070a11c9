/* The cgroup v2 hierarchy: where it is mounted, which cgroup a process
 * is in, moving processes, and finding a systemd unit's cgroup. */
#ifndef TK_CGROUPS_H
#define TK_CGROUPS_H

#include <stdbool.h>

#include <stddef.h>
#include <sys/types.h>

/* The cgroup v2 mount point (/sys/fs/cgroup, or /sys/fs/cgroup/unified
 * on a hybrid system) into buf; 0, or -1 when none is mounted. */
int tk_cgroup2_root(char *buf, size_t size);

/* The cgroup v2 path of pid below the root ("/system.slice/x.service",
 * "/" for the root itself) into buf; 0 or -1. */
int tk_cgroup_of(pid_t pid, char *buf, size_t size);

/* Write pid into a cgroup.procs file; 0 or -1 with errno. */
int tk_cgroup_move(const char *procs, pid_t pid);

/* Move every process listed in the cgroup.procs file procs into the
 * cgroup directory dest. */
void tk_cgroup_move_all(const char *procs, const char *dest);

/* The directory of the systemd unit NAME (nginx.service, foo.scope)
 * below the cgroup v2 root, found by a walk (system.slice, user.slice,
 * machine.slice and deeper), into buf; 0 or -1 when there is none. */
int tk_unit_cgroup(const char *root, const char *unit, char *buf, size_t size);

/* --print-cgroup: the path below the cgroup v2 root of the cgroup whose
 * id (its directory's inode number, as BPF's bpf_get_current_cgroup_id
 * gives it) is id: "/system.slice/nginx.service", "/" for the root.
 * Known paths are cached; an unknown id walks the hierarchy again, at
 * most once a second. A cgroup gone before it was seen is "(id N)". */
const char *tk_cgroup_path(unsigned long long id);

/* The mount point of the cgroup v1 hierarchy that holds CONTROLLER
 * ("memory"), from /proc/self/mountinfo: 0, or -1 when there is none. */
int tk_cgroup1_root(const char *controller, char *buf, size_t size);

/* The path of the memory cgroup whose kernfs id is id: on cgroup v2
 * (v2: tk_cgroup_path), else in the v1 memory hierarchy, relative to
 * its mount ("/" for its root). "(id N)" when not found. */
const char *tk_memcg_path(unsigned long long id, bool v2);

#endif
