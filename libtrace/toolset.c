#include "toolset.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output.h"
#include "setup.h"

/* Tools that need an argument to run: one dry run per entry, reported
 * under its label. Every other tool runs as `TOOL --dry-run`. */
static const struct {
	const char *tool, *label;
	const char *args[3];
} variants[] = {
	{ "funclatency", "funclatency (kernel function)", { "vfs_read" } },
	{ "funclatency", "funclatency (user function)", { "c:getpid" } },
	{ "stackcount", "stackcount (tracepoint)", { "t:sched:sched_switch" } },
	{ "stackcount", "stackcount (kernel function)", { "vfs_read" } },
	{ "stackcount", "stackcount (user function)", { "c:getpid" } },
	{ "funccount", "funccount (tracepoint)", { "t:sched:sched_switch" } },
	{ "funccount", "funccount (kernel function)", { "vfs_read" } },
	{ "funccount", "funccount (user function)", { "c:getpid" } },
	{ "trace", "trace (tracepoint)", { "t:sched:sched_switch" } },
	{ "trace", "trace (kernel function)", { "k:vfs_read" } },
	{ "trace", "trace (user function)", { "u:c:getpid" } },
	{ "argdist", "argdist (tracepoint)", { "-C", "t:sched:sched_switch" } },
	{ "argdist", "argdist (kernel function)", { "-C", "k:vfs_read" } },
	{ "argdist", "argdist (user function)", { "-C", "u:c:getpid" } },
	/* the others by name: ext4slower, xfsdist, ... */
	{ "fsslower", "fsslower (-t ext4)", { "-t", "ext4" } },
	{ "fsdist", "fsdist (-t ext4)", { "-t", "ext4" } },
};
#define N_VARIANTS (sizeof(variants) / sizeof(variants[0]))

/* Programs beside the tools that are not tools: no --dry-run. */
static bool not_a_tool(const char *name)
{
	return !strcmp(name, "tracekit") || !strcmp(name, "tracekit-doctor") ||
	       !strncmp(name, "tracekitd", 9);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_run(struct tk_toolset *s, const char *tool, const char *label,
		    const char *const *args)
{
	struct tk_tool_run *r = realloc(s->runs, (s->n + 1) * sizeof(*r));

	if (!r)
		tk_fail("out of memory");
	s->runs = r;
	r += s->n++;
	memset(r, 0, sizeof(*r));
	snprintf(r->tool, sizeof(r->tool), "%s", tool);
	snprintf(r->label, sizeof(r->label), "%s", label);
	snprintf(r->path, sizeof(r->path), "%s/%s", s->dir, tool);
	r->args = args;
}

void tk_toolset_dir(char *dir, size_t size)
{
	char self[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (len < 0)
		tk_fail("cannot find my own directory (/proc/self/exe: %s)", strerror(errno));
	self[len] = 0;
	slash = strrchr(self, '/');
	snprintf(dir, size, "%.*s", slash ? (int)(slash - self) : 0, self);
	if (!dir[0])
		snprintf(dir, size, "/");
}

void tk_toolset_find(struct tk_toolset *s)
{
	char path[PATH_MAX + 256], **names = NULL;
	size_t n = 0, i, k;
	struct dirent *d;
	DIR *dir;

	memset(s, 0, sizeof(*s));
	tk_toolset_dir(s->dir, sizeof(s->dir));
	dir = opendir(s->dir);
	if (!dir)
		tk_fail("cannot list %s: %s", s->dir, strerror(errno));
	while ((d = readdir(dir))) {
		char **nn;

		if (d->d_name[0] == '.' || not_a_tool(d->d_name) ||
		    strlen(d->d_name) >= sizeof(s->runs->tool))
			continue;
		snprintf(path, sizeof(path), "%s/%s", s->dir, d->d_name);
		if (!tk_is_tracekit_tool(path)) {
			if (access(path, X_OK) == 0)
				tk_info("skipping %s: not a tracekit tool", path);
			continue;
		}
		nn = realloc(names, (n + 1) * sizeof(*names));
		if (!nn || !(nn[n] = strdup(d->d_name)))
			tk_fail("out of memory");
		names = nn;
		n++;
	}
	closedir(dir);
	qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; i < n; i++) {
		bool special = false;

		for (k = 0; k < N_VARIANTS; k++)
			if (!strcmp(variants[k].tool, names[i])) {
				add_run(s, names[i], variants[k].label, variants[k].args);
				special = true;
			}
		if (!special)
			add_run(s, names[i], names[i], NULL);
		free(names[i]);
	}
	free(names);
}

/* The dry runs, `parallel` at once: workers take the next run in order;
 * the caller hands each on as soon as it and every run before it are
 * finished. */
struct pool {
	struct tk_toolset *s;
	double timeout_s;
	pthread_mutex_t lock;
	pthread_cond_t finished;
	size_t next;
	int workers_left;
};

static void *dry_run_worker(void *arg)
{
	struct pool *p = arg;

	for (;;) {
		struct tk_tool_run *r;
		size_t i;
		int err;

		pthread_mutex_lock(&p->lock);
		i = !tk_exiting() && p->next < p->s->n ? p->next++ : p->s->n;
		if (i == p->s->n) {
			p->workers_left--;
			pthread_cond_broadcast(&p->finished);
		}
		pthread_mutex_unlock(&p->lock);
		if (i == p->s->n)
			return NULL;
		r = &p->s->runs[i];
		tk_info("running %s --dry-run%s%s", r->path, r->args ? " " : "",
			r->args ? r->args[0] : "");
		err = tk_tool_check_run(r->path, r->args, p->timeout_s, &r->check);
		if (err)
			snprintf(r->check.error, sizeof(r->check.error),
				 "%s: cannot run it: %s", r->label, strerror(-err));
		pthread_mutex_lock(&p->lock);
		r->done = !tk_exiting();
		r->finished = true;
		pthread_cond_broadcast(&p->finished);
		pthread_mutex_unlock(&p->lock);
	}
}

void tk_toolset_check(struct tk_toolset *s, long parallel, double timeout_s,
		      void (*done)(struct tk_tool_run *run, void *arg), void *arg)
{
	struct pool p = { .s = s, .timeout_s = timeout_s,
			  .lock = PTHREAD_MUTEX_INITIALIZER,
			  .finished = PTHREAD_COND_INITIALIZER };
	pthread_t tids[64];
	int n = parallel < (long)s->n ? (int)parallel : (int)s->n, k, err;

	if (n > 64)
		n = 64;
	p.workers_left = n;
	for (k = 0; k < n; k++)
		if ((err = pthread_create(&tids[k], NULL, dry_run_worker, &p)))
			tk_fail("cannot start a thread: %s", strerror(err));
	for (size_t i = 0; i < s->n; i++) {
		pthread_mutex_lock(&p.lock);
		while (!s->runs[i].finished && p.workers_left)
			pthread_cond_wait(&p.finished, &p.lock);
		pthread_mutex_unlock(&p.lock);
		if (s->runs[i].done && done)
			done(&s->runs[i], arg);
	}
	for (k = 0; k < n; k++)
		pthread_join(tids[k], NULL);
}

void tk_tool_check_summary(const struct tk_tool_check *c, char *buf, size_t size)
{
	size_t len = 0;
	int i, j;

	buf[0] = 0;
	for (i = 0; i < c->n_probes; i++) {
		int count = 0;

		for (j = 0; j < i; j++)
			if (!strcmp(c->probes[j].method, c->probes[i].method))
				break;
		if (j < i)
			continue;  /* counted already */
		for (j = i; j < c->n_probes; j++)
			count += !strcmp(c->probes[j].method, c->probes[i].method);
		len += snprintf(buf + len, len < size ? size - len : 0, "%s%s (%d probe%s)",
				len ? ", " : "", c->probes[i].method, count,
				count == 1 ? "" : "s");
	}
	if (!c->n_probes)
		len += snprintf(buf + len, len < size ? size - len : 0, "no probes");
	if (c->transport[0])
		snprintf(buf + len, len < size ? size - len : 0, "; transport %s",
			 c->transport);
}

void tk_toolset_free(struct tk_toolset *s)
{
	for (size_t i = 0; i < s->n; i++)
		tk_tool_check_free(&s->runs[i].check);
	free(s->runs);
	s->runs = NULL;
	s->n = 0;
}
