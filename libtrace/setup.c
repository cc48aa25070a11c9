#include "setup.h"

#include <bpf/btf.h>

#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "bpf.h"
#include "kbtf.h"
#include "opts.h"

static const char *tool_name = "tracekit";
static volatile sig_atomic_t stop_signal, stop_requested;
static volatile pid_t forward_pid;
/* Written once a stop is asked for, so that a sleep that began just
 * after its tk_exiting() check still ends at once: a flag alone leaves
 * a window in which the signal lands after the check and before
 * nanosleep, and then the sleep lasts the whole interval (cachestat's
 * 3600 s hung a test on 5.10 this way). */
static int wake_pipe[2] = { -1, -1 };
static void (*ready_hook)(void);
static double start_time;

void tk_set_tool_name(const char *name)
{
	tool_name = name;
}

const char *tk_tool_name(void)
{
	return tool_name;
}

static double now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBBPF_WARN) {
		char msg[512];
		va_list copy;

		/* Which program failed, so only that probe falls back. */
		va_copy(copy, ap);
		vsnprintf(msg, sizeof(msg), fmt, copy);
		va_end(copy);
		tk_bpf_note_libbpf_warning(msg);
	}
	/* Tools explain failures themselves: libbpf speaks only with -v, and
	 * its debug chatter (every relocation) only with -vv. */
	if (!tk_opts.verbose || (level == LIBBPF_DEBUG && tk_opts.verbose < 2))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void wake_sleepers(void)
{
	int saved = errno;

	if (wake_pipe[1] >= 0)
		(void)!write(wake_pipe[1], "", 1);  /* full: already awake */
	errno = saved;
}

static void on_signal(int sig, siginfo_t *info, void *uc)
{
	(void)uc;
	/* A traced COMMAND gets the signal too, unless the terminal sent it:
	 * then it went to the whole foreground process group, COMMAND
	 * included, and a second copy could end a program that takes its
	 * first Ctrl-C gracefully. */
	if (forward_pid > 0 && info->si_code != SI_KERNEL)
		kill(forward_pid, sig);
	/* A second signal ends the tool at once: with SA_RESTART a write to
	 * a reader that never reads again would otherwise hold it forever. */
	if (stop_signal) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
	stop_signal = sig;
	wake_sleepers();
}

void tk_forward_signals_to(pid_t pid)
{
	forward_pid = pid;
}

bool tk_signalled(void)
{
	return stop_signal != 0;
}

void tk_request_stop(void)
{
	stop_requested = 1;
	wake_sleepers();
}

void tk_on_ready(void (*fn)(void))
{
	ready_hook = fn;
}

void tk_init(void)
{
	struct sigaction sa = { .sa_sigaction = on_signal,
				.sa_flags = SA_RESTART | SA_SIGINFO };
	struct stat st;

	libbpf_set_print(libbpf_print);
	/* Without the pipe (no fd left), tk_sleep_ms polls fd -1, which poll
	 * ignores: a plain sleep that a signal cuts short, as before. */
	if (wake_pipe[0] < 0 && pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		wake_pipe[0] = wake_pipe[1] = -1;
	/* SA_RESTART: a write(2) to a full pipe that the signal interrupts
	 * goes on, where EINTR would make stdio drop its whole buffer (a
	 * line cut in two). poll, epoll_wait and nanosleep, where the main
	 * loops wait, return EINTR whatever the flag (signal(7)), so the
	 * loops still end at once. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* SIGPIPE keeps its default action: `tool | head` ends quietly. */
	if (fstat(STDOUT_FILENO, &st) == 0 &&
	    (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		setvbuf(stdout, NULL, _IOLBF, 0);
	start_time = now_mono();
}

static volatile sig_atomic_t reload_signal;

static void on_reload(int sig)
{
	(void)sig;
	reload_signal = 1;
}

void tk_catch_reload(void)
{
	struct sigaction sa = { .sa_handler = on_reload, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);  /* SA_RESTART, as in tk_init */
	sigaction(SIGHUP, &sa, NULL);
}

bool tk_reload_requested(void)
{
	if (!reload_signal)
		return false;
	reload_signal = 0;
	return true;
}

double tk_elapsed(void)
{
	return now_mono() - start_time;
}

bool tk_exiting(void)
{
	if (stop_signal || stop_requested)
		return true;
	return tk_opts.duration > 0 && tk_elapsed() >= tk_opts.duration;
}

long tk_read_sysctl(const char *path, long dflt)
{
	FILE *f = fopen(path, "re");
	long v = dflt;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = dflt;
		fclose(f);
	}
	return v;
}

int tk_wait_ms(int max_ms)
{
	double left;

	if (tk_opts.duration <= 0)
		return max_ms;
	left = (tk_opts.duration - tk_elapsed()) * 1000;
	if (left < 0)
		return 0;
	return left < max_ms ? (int)left + 1 : max_ms;
}

void tk_sleep_ms(int ms)
{
	struct pollfd wake = { .fd = wake_pipe[0], .events = POLLIN };

	ms = tk_wait_ms(ms);
	/* The pipe stays readable once a stop was asked for, before or
	 * during the wait; a signal also cuts poll short. */
	if (!tk_exiting())
		poll(&wake, 1, ms);
}

void tk_sleep_until(double t)
{
	double left;

	while (!tk_exiting()) {
		left = t - tk_elapsed();
		if (t >= 0 && left <= 0)
			return;
		tk_sleep_ms(t < 0 || left > 1 ? 1000 : (int)(left * 1000) + 1);
	}
}

void tk_print_intervals(void (*print)(void *arg, int seq), void *arg)
{
	double next = tk_opts.interval ? tk_elapsed() : 0;
	int seq = 0;
	bool exiting;

	do {
		next += tk_opts.interval;
		tk_sleep_until(tk_opts.interval ? next : -1);
		exiting = tk_exiting();
		print(arg, ++seq);
		/* A signal during that print may have come after what it read
		 * (a descheduled tool's print takes long): one more, so what
		 * happened before the signal is printed. A test's writes made
		 * between a print's read and its Ctrl-C were lost so, under
		 * TCG. */
		if (!exiting && tk_exiting() && (!tk_opts.count || seq < tk_opts.count))
			print(arg, ++seq);
	} while (!tk_exiting() && (!tk_opts.count || seq < tk_opts.count));
}

/* Under systemd, stderr may be a stream into the journal, whose device
 * and inode JOURNAL_STREAM names (systemd.exec(5)). Each line then starts
 * with its syslog priority, "<4>", as sd-daemon(3) describes, so the
 * journal files warnings as warnings; and without the tool's name, which
 * the journal records itself. */
static bool stderr_is_journal(void)
{
	static int known = -1;
	unsigned long long dev, ino;
	struct stat st;

	if (known < 0) {
		const char *env = getenv("JOURNAL_STREAM");

		known = env && sscanf(env, "%llu:%llu", &dev, &ino) == 2 &&
			!fstat(STDERR_FILENO, &st) && st.st_dev == dev &&
			st.st_ino == ino;
	}
	return known;
}

static void vmessage(int priority, const char *fmt, va_list ap)
{
	fflush(stdout);
	if (stderr_is_journal())
		fprintf(stderr, "<%d>", priority);
	else
		fprintf(stderr, "%s: ", tool_name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

static jmp_buf *fail_trap;
static char *fail_msg;
static size_t fail_msg_size;

void tk_fail_trap(jmp_buf *trap, char *msg, size_t size)
{
	fail_trap = trap;
	fail_msg = msg;
	fail_msg_size = size;
}

void tk_fail(const char *fmt, ...)
{
	jmp_buf *trap = fail_trap;
	va_list ap;

	va_start(ap, fmt);
	if (trap) {
		vsnprintf(fail_msg, fail_msg_size, fmt, ap);
		va_end(ap);
		fail_trap = NULL;
		longjmp(*trap, 1);
	}
	vmessage(LOG_ERR, fmt, ap);
	va_end(ap);
	exit(1);
}

void tk_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(LOG_WARNING, fmt, ap);
	va_end(ap);
}

void tk_notice(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(LOG_NOTICE, fmt, ap);
	va_end(ap);
}

void tk_info(const char *fmt, ...)
{
	va_list ap;

	if (!tk_opts.verbose)
		return;
	va_start(ap, fmt);
	vmessage(LOG_INFO, fmt, ap);
	va_end(ap);
}

static const char *tracefs_root(void)
{
	if (access("/sys/kernel/tracing/events", F_OK) == 0)
		return "/sys/kernel/tracing";
	if (access("/sys/kernel/debug/tracing/events", F_OK) == 0)
		return "/sys/kernel/debug/tracing";
	return NULL;
}

bool tk_tracepoint_exists(const char *category, const char *name)
{
	const char *root = tracefs_root();
	char path[256];

	if (!root)
		return true;
	snprintf(path, sizeof(path), "%s/events/%s/%s", root, category, name);
	return access(path, F_OK) == 0;
}

/* Does the kernel's BTF have tracepoint NAME (its btf_trace_NAME
 * typedef, which tp_btf attaches by)? */
static bool tracepoint_in_btf(const char *name)
{
	const struct btf *btf = tk_kernel_btf();
	char tname[256];

	if (!btf)
		return false;
	snprintf(tname, sizeof(tname), "btf_trace_%s", name);
	return btf__find_by_name_kind(btf, tname, BTF_KIND_TYPEDEF) > 0;
}

enum tk_tp_lookup tk_tracepoint_lookup(const char *category, const char *name)
{
	const char *root;
	char path[512];

	if (tk_ensure_tracefs() == 0 && (root = tracefs_root())) {
		snprintf(path, sizeof(path), "%s/events/%s/%s", root, category, name);
		if (access(path, F_OK) == 0)
			return TK_TP_FOUND;
		snprintf(path, sizeof(path), "%s/events/%s", root, category);
		if (access(path, F_OK))
			return TK_TP_NO_CATEGORY;
		/* A bare tracepoint (no trace event) of a category tracefs
		 * has is known by its BTF. */
		return tracepoint_in_btf(name) ? TK_TP_FOUND : TK_TP_NO_NAME;
	}
	return tracepoint_in_btf(name) ? TK_TP_FOUND : TK_TP_NO_CATEGORY;
}

int tk_ensure_tracefs(void)
{
	if (tracefs_root())
		return 0;
	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL))
		return -errno;
	tk_info("mounted tracefs at /sys/kernel/tracing");
	return 0;
}

const char *tk_tracefs_file(const char *name, char *buf, size_t size)
{
	const char *root;

	tk_ensure_tracefs();
	root = tracefs_root();
	if (!root)
		return NULL;
	snprintf(buf, size, "%s/%s", root, name);
	return access(buf, R_OK) ? NULL : buf;
}

void tk_ready(void)
{
	const char *env = getenv("TRACEKIT_READY_FD");

	fflush(stdout);  /* the header, before the first event */
	/* Tracing begins: tk_elapsed, and so --duration and every interval,
	 * counts from here, as bcc's tools sleep for a duration once
	 * attached. Loading and attaching can take seconds (over 1 s under
	 * TCG in the arm64 6.12 VM: offcputime's 1 s run ended before the
	 * workload's sleeps). After the header is out (a full pipe can hold
	 * it), before the word: whoever waits on it sees the clock started. */
	start_time = now_mono();
	if (isatty(STDERR_FILENO) && !tk_opts.json && !ready_hook)
		fprintf(stderr, "Tracing... Hit Ctrl-C to end.\n");
	if (env && *env) {
		char *end;
		long fd = strtol(env, &end, 10);

		if (!*end && fd > 2 && fd < 65536) {
			if (write((int)fd, "ready\n", 6) < 0)
				tk_info("TRACEKIT_READY_FD=%ld: %s", fd, strerror(errno));
			close((int)fd);
		}
	}
	/* Not for a traced COMMAND, which may be a tool itself. */
	unsetenv("TRACEKIT_READY_FD");
	if (ready_hook)
		ready_hook();
}
