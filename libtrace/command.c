#include "command.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroups.h"
#include "filter.h"
#include "opts.h"
#include "setup.h"

extern char **environ;

static char exec_path[PATH_MAX];
static char cgroup_dir[PATH_MAX];      /* the transient cgroup; "" with -a */
static char home_cgroup[PATH_MAX];     /* the tool's own cgroup */
static volatile pid_t child = -1;
static volatile int child_status = -1; /* wait status once reaped */
/* Shared with the child, which makes no system call between saying it is
 * ready and its execve: what it does before is not COMMAND's. */
static struct handshake {
	int ready;   /* child: set up, spinning */
	int go;      /* parent: it is in the cgroup (or followed): exec */
} *hs;

/* The executable COMMAND names, found as a shell finds it: a name with a
 * slash as it is, else the first PATH entry that has it executable. The
 * exit statuses are the shell's: 127 not found, 126 found but not
 * executable. Resolved here, not by execvp in the child, so that the
 * child makes one execve (a PATH search would show as failed execves). */
static void find_executable(const char *name)
{
	const char *path = getenv("PATH");
	int denied = 0;

	if (strchr(name, '/')) {
		if (strlen(name) >= sizeof(exec_path))
			errno = ENAMETOOLONG;
		else if (access(name, X_OK) == 0) {
			struct stat st;

			if (stat(name, &st) == 0 && S_ISDIR(st.st_mode))
				errno = EISDIR;
			else {
				strcpy(exec_path, name);
				return;
			}
		}
		fprintf(stderr, "%s: cannot run '%s': %s\n", tk_tool_name(), name,
			strerror(errno));
		exit(errno == ENOENT ? 127 : 126);
	}
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*name && path) {
		const char *end = strchr(path, ':');
		size_t len = end ? (size_t)(end - path) : strlen(path);
		struct stat st;

		if (snprintf(exec_path, sizeof(exec_path), "%.*s%s%s", (int)len,
			     path, len ? "/" : "", name) < (int)sizeof(exec_path) &&
		    stat(exec_path, &st) == 0 && S_ISREG(st.st_mode)) {
			if (access(exec_path, X_OK) == 0)
				return;
			denied = 1;
		}
		path = end ? end + 1 : NULL;
	}
	fprintf(stderr, "%s: cannot run '%s': %s\n", tk_tool_name(), name,
		denied ? "permission denied" : "command not found");
	exit(denied ? 126 : 127);
}

/* Descendants still in the transient cgroup go back to the tool's own,
 * so that the cgroup can be removed; they keep running, untraced. */
static void remove_cgroup(void)
{
	char path[PATH_MAX + 32];
	int tries;

	if (!cgroup_dir[0])
		return;
	for (tries = 0; tries < 100; tries++) {
		if (rmdir(cgroup_dir) == 0 || errno == ENOENT)
			break;
		if (errno != EBUSY)
			break;
		snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup_dir);
		tk_cgroup_move_all(path, home_cgroup);
	}
	cgroup_dir[0] = 0;
}

/* The transient cgroup's name, tracekit-TOOL-PID; in a PID namespace
 * tracekit-TOOL-PID.NSINODE, as other namespaces have the same PIDs. */
static void cgroup_name(char *buf, size_t size, const char *parent)
{
	unsigned long long ns = tk_opts.filter.pidns_ino;

	if (ns)
		snprintf(buf, size, "%s/tracekit-%s-%d.%llu", parent, tk_tool_name(),
			 (int)getpid(), ns);
	else
		snprintf(buf, size, "%s/tracekit-%s-%d", parent, tk_tool_name(),
			 (int)getpid());
}

/* A tool killed outright (SIGKILL, a second Ctrl-C) leaves its empty
 * transient cgroup behind: remove those of this PID namespace's tools
 * that are gone (a PID reused since, this tool's included, is gone too).
 * rmdir refuses a cgroup that still has processes. */
static void remove_stale_cgroups(const char *parent)
{
	unsigned long long ns, own_ns = tk_opts.filter.pidns_ino;
	DIR *d = opendir(parent);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		const char *dash = strrchr(de->d_name, '-');
		char path[PATH_MAX], *end;
		long pid;

		if (strncmp(de->d_name, "tracekit-", 9) || !dash)
			continue;
		pid = strtol(dash + 1, &end, 10);
		ns = *end == '.' ? strtoull(end + 1, &end, 10) : 0;
		if (*end || pid <= 0 || ns != own_ns ||
		    (pid != getpid() && (kill(pid, 0) == 0 || errno != ESRCH)))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", parent, de->d_name) <
		    (int)sizeof(path) && rmdir(path) == 0)
			tk_info("removed %s, left by a tool that was killed", path);
	}
	closedir(d);
}

/* The transient cgroup: a child of the tool's own cgroup (so COMMAND
 * stays under the same limits and accounting as the tool that ran it),
 * or of the cgroup v2 root when the own one is not writable. */
static bool make_cgroup(void)
{
	char root[PATH_MAX], own[PATH_MAX];
	const char *parents[2];
	int i, err = 0;

	if (tk_cgroup2_root(root, sizeof(root)) < 0) {
		tk_info("cgroup v2 is not mounted");
		return false;
	}
	if (tk_cgroup_of(getpid(), own, sizeof(own)) < 0)
		own[0] = 0;
	snprintf(home_cgroup, sizeof(home_cgroup), "%s%s", root,
		 strcmp(own, "/") ? own : "");
	parents[0] = home_cgroup;
	parents[1] = root;
	for (i = 0; i < 2; i++) {
		remove_stale_cgroups(parents[i]);
		cgroup_name(cgroup_dir, sizeof(cgroup_dir), parents[i]);
		err = mkdir(cgroup_dir, 0755) ? errno : 0;
		if (!err) {
			atexit(remove_cgroup);
			tk_opts.cgroup_path = cgroup_dir;
			tk_opts.filter.use_cgroup = 1;
			tk_info("COMMAND runs in the transient cgroup %s", cgroup_dir);
			return true;
		}
	}
	cgroup_dir[0] = 0;
	tk_info("cannot create a cgroup for COMMAND under %s: %s", home_cgroup,
		strerror(err));
	return false;
}

/* How COMMAND's tree is told from other processes: its own cgroup, which
 * follows every descendant for free, or where cgroup v2 cannot be
 * written, its forks followed in BPF. TRACEKIT_COMMAND_FILTER=cgroup or
 * =fork picks one (the tests run both). */
static void choose_filter(void)
{
	const char *env = getenv("TRACEKIT_COMMAND_FILTER");

	if (env && *env && strcmp(env, "cgroup") && strcmp(env, "fork"))
		tk_fail("TRACEKIT_COMMAND_FILTER=%s: expected cgroup or fork", env);
	if ((!env || strcmp(env, "fork")) && make_cgroup())
		return;
	if (env && !strcmp(env, "cgroup"))
		tk_fail("TRACEKIT_COMMAND_FILTER=cgroup: cannot make a cgroup for COMMAND (-v says why)");
	tk_opts.filter.follow = 1;
	tk_info("COMMAND's processes are followed through fork in BPF");
}

static void on_child(int sig)
{
	int saved = errno, status;

	(void)sig;
	if (child > 0 && child_status < 0 &&
	    waitpid(child, &status, WNOHANG) == child) {
		child_status = status;
		tk_request_stop();
	}
	errno = saved;
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/* The child: become the --run-as user, put the terminal's stdout back
 * (-o took fd 1), then wait without a system call until the parent has
 * moved it into the cgroup: any call it made there would be traced
 * (syscount would count it), and strace -f shows COMMAND from its
 * execve. */
static void __attribute__((noreturn)) run_child(int err_fd)
{
	int e;

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	if (tk_opts.saved_stdout >= 0 && dup2(tk_opts.saved_stdout, STDOUT_FILENO) < 0)
		goto fail;
	if (tk_opts.run_as_name) {
		if (initgroups(tk_opts.run_as_name, tk_opts.run_as_gid) ||
		    setresgid(tk_opts.run_as_gid, tk_opts.run_as_gid, tk_opts.run_as_gid) ||
		    setresuid(tk_opts.run_as_uid, tk_opts.run_as_uid, tk_opts.run_as_uid))
			goto fail;
	}
	__atomic_store_n(&hs->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&hs->go, __ATOMIC_ACQUIRE))
		cpu_relax();
	execve(exec_path, tk_opts.command, environ);
fail:
	e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0)
		e = EIO;
	_exit(e == ENOENT ? 127 : 126);
}

/* Put the ready child where the task filter sees it: the followed set,
 * or the transient cgroup (with --all, nowhere). */
static void admit(pid_t pid)
{
	char procs[PATH_MAX + 16];
	int e;

	if (tk_opts.filter.follow) {
		e = -tk_filter_follow_pid(pid);
	} else if (cgroup_dir[0]) {
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", cgroup_dir);
		e = tk_cgroup_move(procs, pid) ? errno : 0;
	} else {
		return;
	}
	if (e) {
		kill(pid, SIGKILL);
		tk_fail("cannot put COMMAND where it is traced (%s): %s",
			tk_opts.filter.follow ? "the followed set" : cgroup_dir, strerror(e));
	}
}

static void start_command(void)
{
	int err_pipe[2], e;
	pid_t pid;
	ssize_t n;

	hs = mmap(NULL, sizeof(*hs), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (hs == MAP_FAILED || pipe2(err_pipe, O_CLOEXEC))
		tk_fail("cannot start COMMAND: %s", strerror(errno));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		tk_fail("cannot start COMMAND: fork: %s", strerror(errno));
	if (pid == 0)
		run_child(err_pipe[1]);
	child = pid;
	close(err_pipe[1]);
	/* Until the child is ready, its own set-up calls (signal(), the
	 * --run-as switch) would be counted as COMMAND's. It is ready or
	 * dead (a failed set-up: the pipe says why) in a moment. */
	while (!__atomic_load_n(&hs->ready, __ATOMIC_ACQUIRE) && child_status < 0)
		sched_yield();
	if (child_status < 0)
		admit(pid);
	tk_forward_signals_to(pid);
	__atomic_store_n(&hs->go, 1, __ATOMIC_RELEASE);
	/* The pipe closes on a successful execve; else it holds errno. */
	do
		n = read(err_pipe[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(err_pipe[0]);
	munmap(hs, sizeof(*hs));
	if (n == sizeof(e)) {
		fprintf(stderr, "%s: cannot run '%s': %s\n", tk_tool_name(),
			tk_opts.command[0], strerror(e));
		while (child_status < 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		remove_cgroup();
		exit(e == ENOENT ? 127 : 126);
	}
}

void tk_command_prepare(void)
{
	struct sigaction sa = { .sa_handler = on_child,
				.sa_flags = SA_RESTART | SA_NOCLDSTOP };

	if (!tk_opts.command)
		return;
	find_executable(tk_opts.command[0]);
	if (!tk_opts.all)
		choose_filter();
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	tk_on_ready(start_command);
}

bool tk_command_ended(void)
{
	return child > 0 && child_status >= 0;
}

int tk_exit_status(void)
{
	int st;

	fflush(stdout);
	/* A signal that ended the tool went to COMMAND too (forwarded, or
	 * from the terminal to both): wait for it to end, so that the exit
	 * status is its own. A second signal ends the tool at once. Ended
	 * otherwise (--duration, a count), the tool leaves COMMAND running. */
	while (child > 0 && child_status < 0) {
		pid_t p = waitpid(child, &st, tk_signalled() ? 0 : WNOHANG);

		if (p == child)
			child_status = st;
		else if (p == 0 || errno != EINTR)
			break;   /* still running, or the handler reaped it */
	}
	remove_cgroup();
	if (child_status < 0)
		return 0;
	if (WIFSIGNALED(child_status))
		return 128 + WTERMSIG(child_status);
	return WEXITSTATUS(child_status);
}
