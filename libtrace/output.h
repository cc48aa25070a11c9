/* Text output helpers: the time column and aligned tables. */
#ifndef TK_OUTPUT_H
#define TK_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "json.h"

/* -o FILE: stdout goes to FILE (created, or truncated). keep_stdout:
 * the first stdout stays open in tk_opts.saved_stdout, for a traced
 * COMMAND. A file that cannot be written ends the tool (exit 1). */
void tk_output_to_file(const char *path, bool keep_stdout);

/* "HH:MM:SS" of the wall clock now, into buf (at least 9 bytes). */
const char *tk_time_str(char *buf, size_t len);

/* The top tools' interval heading, as bcc's: the screen cleared (clear,
 * and stdout a terminal) or else an empty line; then, with summary,
 * "HH:MM:SS loadavg: " and /proc/loadavg's line, and an empty line. */
void tk_top_heading(bool clear, bool summary);

/* The "time" member of a JSON record: ISO 8601 with microseconds, UTC. */
void tk_json_time(struct tk_json *j);

/* A column of an aligned text table. */
struct tk_col {
	const char *name;
	int width;      /* at least the header's width */
	int left;       /* left-aligned (text) rather than right (numbers) */
};

/* Print the header row of cols, separated by one space; the last column
 * is never padded on the right. */
void tk_print_header(FILE *f, const struct tk_col *cols, int n);

/* Print one cell with the column's width and alignment, and the separator
 * that follows unless it is the last column. */
void tk_print_cell(FILE *f, const struct tk_col *col, int last,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* --print-cgroup (tk_opts.filter.cgroup_ids): the CGROUP column, the
 * path of the cgroup with this id (libtrace/cgroups.h) padded to width
 * (a longer path is printed whole), then one space; width 0: the last
 * column, neither padded nor followed by a space. And the "cgroup"
 * member of a JSON record. */
#define TK_CGROUP_HEADER "CGROUP"
#define TK_CGROUP_WIDTH 24
void tk_print_cgroup(FILE *f, unsigned long long id, int width);
void tk_json_cgroup(struct tk_json *j, unsigned long long id);

/* The task members most records start with: "pid", "tid", "uid",
 * "comm" (comm_size bytes at most, NUL-ended or not) and, with
 * --print-cgroup, "cgroup". */
void tk_json_task(struct tk_json *j, int pid, int tid, unsigned int uid,
		  const char *comm, size_t comm_size, unsigned long long cgroup_id);

/* A name from a table that may not know the value (a signal's, a
 * capability's): the string, or null when s is NULL. */
void tk_json_name(struct tk_json *j, const char *key, const char *s);

/* "error": the errno name of a negative result ret ("EPERM"), else
 * null (a success, or an errno without a name). */
void tk_json_error(struct tk_json *j, long ret);

/* Print bytes for a terminal or a text pipe: control characters and
 * bytes that are not valid UTF-8 as \xNN, so one event stays one line. */
void tk_print_safe(FILE *f, const char *s, size_t len);

/* tk_print_safe, then blanks up to width columns: a comm column. */
void tk_print_safe_padded(FILE *f, const char *s, size_t len, int width);

#endif
