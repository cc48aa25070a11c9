/* The tracekit tools installed beside a program (tracekit-doctor, the
 * tracekit front command) and their dry runs, several at once. */
#ifndef TK_TOOLSET_H
#define TK_TOOLSET_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "tk_features.h"

struct tk_tool_run {
	char tool[64];       /* the program's name */
	char label[64];      /* the name, or "name (variant)" */
	char path[PATH_MAX + 64];  /* dir/tool */
	const char *const *args;   /* after --dry-run; NULL: none */
	struct tk_tool_check check;
	bool done;      /* its check finished, not cut short by a signal */
	bool finished;  /* its worker is through with it */
};

struct tk_toolset {
	char dir[PATH_MAX];
	struct tk_tool_run *runs;  /* by name; a tool's variants together */
	size_t n;
};

/* This program's directory, where the tools are. */
void tk_toolset_dir(char *dir, size_t size);

/* The tracekit tools in this program's directory, by name: one run per
 * tool, or one per variant for the tools that need an argument to run
 * (funclatency on a kernel and on a user function, ...). The front
 * command, tracekit-doctor and tracekitd are left out. Fails the program
 * when the directory cannot be read. */
void tk_toolset_find(struct tk_toolset *s);

/* Dry-run every run, parallel at once, each killed after timeout_s.
 * done(run, arg) is called in the calling thread for each run in order,
 * as soon as it and every run before it are finished; not for a run a
 * signal cut short. */
void tk_toolset_check(struct tk_toolset *s, long parallel, double timeout_s,
		      void (*done)(struct tk_tool_run *run, void *arg), void *arg);

/* "tp (4 probes), raw_tp (1 probe); transport ringbuf" */
void tk_tool_check_summary(const struct tk_tool_check *c, char *buf, size_t size);

void tk_toolset_free(struct tk_toolset *s);

#endif
