#include "cgroups.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int tk_cgroup2_root(char *buf, size_t size)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int rc = -1;

	if (!f)
		return -1;
	/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS] - FSTYPE SOURCE SUPER" */
	while (rc < 0 && fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], *dash = strstr(line, " - ");

		if (!dash || strncmp(dash + 3, "cgroup2 ", 8) ||
		    sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
		    strlen(mnt) >= size)
			continue;
		strcpy(buf, mnt);
		rc = 0;
	}
	fclose(f);
	return rc;
}

int tk_cgroup_of(pid_t pid, char *buf, size_t size)
{
	char path[64], line[PATH_MAX + 8];
	FILE *f;
	int rc = -1;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (rc < 0 && fgets(line, sizeof(line), f)) {
		size_t len;

		if (strncmp(line, "0::", 3))
			continue;
		len = strcspn(line + 3, "\n");
		if (len >= size)
			break;
		memcpy(buf, line + 3, len);
		buf[len] = 0;
		rc = 0;
	}
	fclose(f);
	return rc;
}

int tk_cgroup_move(const char *procs, pid_t pid)
{
	char num[24];
	int fd = open(procs, O_WRONLY | O_CLOEXEC), len, rc = 0;

	if (fd < 0)
		return -1;
	len = snprintf(num, sizeof(num), "%d\n", (int)pid);
	if (write(fd, num, len) != len)
		rc = -1;
	if (close(fd) && !rc)
		rc = -1;
	return rc;
}

void tk_cgroup_move_all(const char *procs, const char *dest)
{
	char to[PATH_MAX + 16];
	FILE *f = fopen(procs, "re");
	int pid;

	if (!f)
		return;
	snprintf(to, sizeof(to), "%s/cgroup.procs", dest);
	while (fscanf(f, "%d", &pid) == 1)
		tk_cgroup_move(to, pid);
	fclose(f);
}

/* nftw has no context argument: the walk's state. */
static const char *want_unit;
static char found[PATH_MAX];
static int found_level;

static int visit(const char *path, const struct stat *st, int type,
		 struct FTW *ftw)
{
	(void)st;
	if (type != FTW_D || ftw->level == 0)
		return FTW_CONTINUE;
	/* A unit's own sub-cgroups can be deep; units are not (a user
	 * manager's are at user.slice/user-N.slice/user@N.service/x.slice). */
	if (ftw->level > 6)
		return FTW_SKIP_SUBTREE;
	if (!strcmp(path + ftw->base, want_unit) &&
	    (!found[0] || ftw->level < found_level) && strlen(path) < sizeof(found)) {
		strcpy(found, path);
		found_level = ftw->level;
	}
	return FTW_CONTINUE;
}

int tk_unit_cgroup(const char *root, const char *unit, char *buf, size_t size)
{
	want_unit = unit;
	found[0] = 0;
	if (nftw(root, visit, 16, FTW_PHYS | FTW_ACTIONRETVAL) < 0 || !found[0] ||
	    strlen(found) >= size)
		return -1;
	strcpy(buf, found);
	return 0;
}

/* An id -> path cache of one hierarchy, sorted by id after a walk. */
struct cgroup_name {
	unsigned long long id;
	char *path;
};

struct id_cache {
	char root[PATH_MAX];   /* "": none found */
	bool have_root;
	struct cgroup_name *names;
	size_t n, cap;
	double last_walk;
};

static struct id_cache v2_cache = { .last_walk = -1 }, v1_memory = { .last_walk = -1 };
static struct id_cache *walking;   /* nftw has no argument for add_name */

static int add_name(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	struct id_cache *c = walking;
	size_t root_len = strlen(c->root);

	(void)ftw;
	if (type != FTW_D)
		return FTW_CONTINUE;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;
		struct cgroup_name *p = realloc(c->names, cap * sizeof(*p));

		if (!p)
			return FTW_STOP;
		c->names = p;
		c->cap = cap;
	}
	c->names[c->n].id = st->st_ino;
	c->names[c->n].path = strdup(path[root_len] ? path + root_len : "/");
	if (c->names[c->n].path)
		c->n++;
	return FTW_CONTINUE;
}

static int by_id(const void *a, const void *b)
{
	const struct cgroup_name *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static void walk_names(struct id_cache *c)
{
	int i;

	walking = c;
	/* glibc's nftw gives up on a directory removed between its listing
	 * and its stat (systemd makes and removes cgroups all the time):
	 * walk again, from scratch. */
	for (i = 0; i < 3; i++) {
		size_t j;

		for (j = 0; j < c->n; j++)
			free(c->names[j].path);
		c->n = 0;
		if (!c->root[0] || nftw(c->root, add_name, 16, FTW_PHYS | FTW_ACTIONRETVAL) == 0 ||
		    errno != ENOENT)
			break;
	}
	qsort(c->names, c->n, sizeof(*c->names), by_id);
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* id's path in c's hierarchy; walked again at most once a second for
 * an id not seen. */
static const char *cached_path(struct id_cache *c, unsigned long long id)
{
	static char unknown[48];
	struct cgroup_name key = { .id = id }, *hit;

	hit = c->n ? bsearch(&key, c->names, c->n, sizeof(*c->names), by_id) : NULL;
	if (!hit && (c->last_walk < 0 || now_seconds() - c->last_walk >= 1)) {
		walk_names(c);
		c->last_walk = now_seconds();
		hit = c->n ? bsearch(&key, c->names, c->n, sizeof(*c->names), by_id) : NULL;
	}
	if (hit)
		return hit->path;
	snprintf(unknown, sizeof(unknown), "(id %llu)", id);
	return unknown;
}

const char *tk_cgroup_path(unsigned long long id)
{
	if (!v2_cache.have_root) {
		if (tk_cgroup2_root(v2_cache.root, sizeof(v2_cache.root)) < 0)
			v2_cache.root[0] = 0;   /* no hierarchy: nothing is found */
		v2_cache.have_root = true;
	}
	return cached_path(&v2_cache, id);
}

int tk_cgroup1_root(const char *controller, char *buf, size_t size)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int rc = -1;

	if (!f)
		return -1;
	/* "... MOUNTPOINT OPTS [TAGS] - cgroup SOURCE SUPER_OPTS": the
	 * controllers are among the super options (rw,memory). */
	while (rc < 0 && fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], super[1024], *dash = strstr(line, " - "), *opt, *save;

		if (!dash || strncmp(dash + 3, "cgroup ", 7) ||
		    sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
		    sscanf(dash + 3, "%*s %*s %1023s", super) != 1 || strlen(mnt) >= size)
			continue;
		for (opt = strtok_r(super, ",", &save); opt; opt = strtok_r(NULL, ",", &save))
			if (!strcmp(opt, controller)) {
				strcpy(buf, mnt);
				rc = 0;
				break;
			}
	}
	fclose(f);
	return rc;
}

const char *tk_memcg_path(unsigned long long id, bool v2)
{
	if (v2)
		return tk_cgroup_path(id);
	if (!v1_memory.have_root) {
		if (tk_cgroup1_root("memory", v1_memory.root, sizeof(v1_memory.root)) < 0)
			v1_memory.root[0] = 0;
		v1_memory.have_root = true;
	}
	return cached_path(&v1_memory, id);
}
