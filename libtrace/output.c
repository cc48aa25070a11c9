#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "cgroups.h"
#include "names.h"
#include "opts.h"
#include "setup.h"

void tk_output_to_file(const char *path, bool keep_stdout)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		tk_fail("cannot write '%s': %s", path, strerror(errno));
	if (keep_stdout) {
		tk_opts.saved_stdout = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
		if (tk_opts.saved_stdout < 0)
			tk_fail("cannot keep stdout for COMMAND: %s", strerror(errno));
	}
	fflush(stdout);
	if (dup2(fd, STDOUT_FILENO) < 0)
		tk_fail("cannot write '%s': %s", path, strerror(errno));
	close(fd);
}

const char *tk_time_str(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, len, "%H:%M:%S", &tm);
	return buf;
}

void tk_top_heading(bool clear, bool summary)
{
	char hms[16], load[128] = "";
	FILE *f;

	if (clear && isatty(STDOUT_FILENO))
		fputs("\033[H\033[2J", stdout);
	else
		putchar('\n');
	if (!summary)
		return;
	f = fopen("/proc/loadavg", "r");
	if (f) {
		if (!fgets(load, sizeof(load), f))
			load[0] = 0;
		fclose(f);
	}
	load[strcspn(load, "\n")] = 0;
	printf("%-8s loadavg: %s\n\n", tk_time_str(hms, sizeof(hms)), load);
}

void tk_json_time(struct tk_json *j)
{
	struct timeval tv;
	struct tm tm;
	char buf[48];
	size_t n;

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, sizeof(buf) - n, ".%06ldZ", (long)tv.tv_usec);
	tk_json_str(j, "time", buf);
}

static void cell(FILE *f, const struct tk_col *col, int last, const char *s)
{
	if (last && col->left)
		fputs(s, f);  /* no trailing blanks */
	else if (last)
		fprintf(f, "%*s", col->width, s);
	else if (col->left)
		fprintf(f, "%-*s ", col->width, s);
	else
		fprintf(f, "%*s ", col->width, s);
}

void tk_print_header(FILE *f, const struct tk_col *cols, int n)
{
	int i;

	for (i = 0; i < n; i++)
		cell(f, &cols[i], i == n - 1, cols[i].name);
	fputc('\n', f);
}

void tk_print_cell(FILE *f, const struct tk_col *col, int last,
		   const char *fmt, ...)
{
	char *buf;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	cell(f, col, last, buf);
	free(buf);
}

/* Returns the columns printed (one per byte written, roughly). */
static int print_safe(FILE *f, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, n;
	int cols = 0;

	while (i < len) {
		if (s[i] >= 0x20 && s[i] < 0x7F) {
			fputc(s[i++], f);
			cols++;
			continue;
		}
		n = s[i] >= 0x80 ? tk_utf8_seq_len(s + i, len - i) : 0;
		/* C1 controls (U+0080..U+009F) move terminals too: NEL, CSI. */
		if (n == 2 && s[i] == 0xC2 && s[i + 1] < 0xA0)
			n = 0;
		if (n) {
			fwrite(s + i, 1, n, f);
			i += n;
			cols++;
		} else {
			fprintf(f, "\\x%02x", s[i++]);
			cols += 4;
		}
	}
	return cols;
}

void tk_print_safe(FILE *f, const char *s, size_t len)
{
	print_safe(f, s, len);
}

void tk_print_safe_padded(FILE *f, const char *s, size_t len, int width)
{
	int cols = print_safe(f, s, len);

	if (cols < width)
		fprintf(f, "%*s", width - cols, "");
}

void tk_print_cgroup(FILE *f, unsigned long long id, int width)
{
	const char *path = tk_cgroup_path(id);

	if (!width) {   /* the last column: nothing after it */
		tk_print_safe(f, path, strlen(path));
		return;
	}
	tk_print_safe_padded(f, path, strlen(path), width);
	fputc(' ', f);
}

void tk_json_cgroup(struct tk_json *j, unsigned long long id)
{
	tk_json_str(j, "cgroup", tk_cgroup_path(id));
}

void tk_json_task(struct tk_json *j, int pid, int tid, unsigned int uid,
		  const char *comm, size_t comm_size, unsigned long long cgroup_id)
{
	tk_json_int(j, "pid", pid);
	tk_json_int(j, "tid", tid);
	tk_json_uint(j, "uid", uid);
	tk_json_strn(j, "comm", comm, strnlen(comm, comm_size));
	if (tk_opts.filter.cgroup_ids)
		tk_json_cgroup(j, cgroup_id);
}

void tk_json_name(struct tk_json *j, const char *key, const char *s)
{
	if (s)
		tk_json_str(j, key, s);
	else
		tk_json_null(j, key);
}

void tk_json_error(struct tk_json *j, long ret)
{
	tk_json_name(j, "error", ret < 0 && ret >= -4095 ? tk_errno_name((int)ret) : NULL);
}
