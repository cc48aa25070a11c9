/* Kernel and process capability probes (see tk_features.h): each one tries
 * the real thing with a trivial program and says what it saw. */
#include "tk_features.h"
#include "names.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <cap-ng.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "setup.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* What the probes attach to: present in every kernel tracekit runs on,
 * and rare enough that a moment of attachment costs nothing. */
#define TP_CATEGORY "sched"
#define TP_NAME "sched_process_exit"
#define KFUNC "vfs_read"

static const struct {
	const char *name;
	enum tk_feature_group group;
} features[TK_FEAT_COUNT] = {
	[TK_FEAT_BTF] = { "btf", TK_FGROUP_ATTACH },
	[TK_FEAT_RINGBUF] = { "ringbuf", TK_FGROUP_ATTACH },
	[TK_FEAT_PERF_BUFFER] = { "perf_buffer", TK_FGROUP_ATTACH },
	[TK_FEAT_TRACEPOINTS] = { "tracepoints", TK_FGROUP_ATTACH },
	[TK_FEAT_RAW_TP] = { "raw_tp", TK_FGROUP_ATTACH },
	[TK_FEAT_TP_BTF] = { "tp_btf", TK_FGROUP_ATTACH },
	[TK_FEAT_FENTRY] = { "fentry", TK_FGROUP_ATTACH },
	[TK_FEAT_KPROBES] = { "kprobes", TK_FGROUP_ATTACH },
	[TK_FEAT_UPROBES] = { "uprobes", TK_FGROUP_ATTACH },
	[TK_FEAT_TRACEFS] = { "tracefs", TK_FGROUP_ATTACH },
	[TK_FEAT_LOCKDOWN] = { "lockdown", TK_FGROUP_KERNEL },
	[TK_FEAT_PERF_EVENT_PARANOID] = { "perf_event_paranoid", TK_FGROUP_KERNEL },
	[TK_FEAT_UNPRIVILEGED_BPF] = { "unprivileged_bpf", TK_FGROUP_KERNEL },
	[TK_FEAT_BPF_STATS] = { "bpf_stats", TK_FGROUP_KERNEL },
	[TK_FEAT_CAPABILITIES] = { "capabilities", TK_FGROUP_PROCESS },
	[TK_FEAT_MEMLOCK] = { "memlock", TK_FGROUP_PROCESS },
};

const char *tk_feature_name(enum tk_feature_id id)
{
	return (unsigned)id < TK_FEAT_COUNT ? features[id].name : NULL;
}

enum tk_feature_group tk_feature_group(enum tk_feature_id id)
{
	return features[id].group;
}

int tk_feature_by_name(const char *name)
{
	int i;

	for (i = 0; i < TK_FEAT_COUNT; i++)
		if (!strcmp(features[i].name, name))
			return i;
	return -1;
}

/* libbpf raises RLIMIT_MEMLOCK on kernels that charge BPF memory to it,
 * at the first map or program: remember the limit the process had. */
static struct rlimit start_memlock;
static int start_memlock_err;

__attribute__((constructor)) static void save_memlock(void)
{
	if (getrlimit(RLIMIT_MEMLOCK, &start_memlock))
		start_memlock_err = -errno;
}

/* ---- small helpers ---- */

static void say(struct tk_feature *f, bool ok, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(struct tk_feature *f, bool ok, const char *fmt, ...)
{
	va_list ap;
	char *p;

	f->ok = ok;
	va_start(ap, fmt);
	vsnprintf(f->detail, sizeof(f->detail), fmt, ap);
	va_end(ap);
	for (p = f->detail; *p; p++)  /* one line, whatever went in */
		if (*p == '\n' || *p == '\t')
			*p = ' ';
}

/* strlcpy: src cut to fit dst. */
static void copy(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = 0;
}

/* "Operation not permitted (EPERM)" for a negative errno. */
static const char *err_str(int err, char *buf, size_t size)
{
	const char *name = tk_errno_name(err);

	snprintf(buf, size, "%s (%s)", tk_strerror(err), name ? name : "?");
	return buf;
}
#define ERR(e) err_str((e), (char[96]){ 0 }, 96)

static int read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		err = -errno;
	else
		buf[n] = 0;
	close(fd);
	return err;
}

static int read_long(const char *path, long long *v)
{
	char buf[64], *end;
	int err = read_text(path, buf, sizeof(buf));

	if (err)
		return err;
	errno = 0;
	*v = strtoll(buf, &end, 10);
	if (errno || end == buf)
		return -EINVAL;
	return 0;
}

static bool have_cap(unsigned cap)
{
	static bool loaded;

	if (!loaded) {
		capng_get_caps_process();
		loaded = true;
	}
	return capng_have_capability(CAPNG_EFFECTIVE, cap);
}

/* CAP_BPF and CAP_PERFMON exist since 5.8: before, CAP_SYS_ADMIN. */
static bool kernel_knows_cap_bpf(void)
{
	long long last;

	return read_long("/proc/sys/kernel/cap_last_cap", &last) == 0 &&
	       last >= CAP_BPF;
}

bool tk_privileged(void)
{
	return have_cap(CAP_SYS_ADMIN) ||
	       (kernel_knows_cap_bpf() && have_cap(CAP_BPF) && have_cap(CAP_PERFMON));
}

/* What fixes a refusal: privileges first, when they are missing. */
static const char *perm_hint(int err)
{
	if ((err == -EPERM || err == -EACCES) && !tk_privileged())
		return "; run as root (or with CAP_BPF and CAP_PERFMON)";
	return "";
}

/* ---- kernel build configuration ---- */

static char *kconfig_text;
static const char *kconfig_path;
static bool kconfig_tried;

char tk_kconfig_parse_line(const char *line, const char *option)
{
	size_t n = strlen(option);

	if (!strncmp(line, option, n) && line[n] == '=') {
		char v = line[n + 1];

		return v == 'y' || v == 'm' ? v : v == 'n' ? 'n' : 'y';
	}
	if (!strncmp(line, "# ", 2) && !strncmp(line + 2, option, n) &&
	    !strncmp(line + 2 + n, " is not set", 11))
		return 'n';
	return 0;
}

int tk_kconfig_load(const char *path)
{
	gzFile gz = gzopen(path, "rb");
	char *text = NULL, buf[4096];
	size_t len = 0;
	int n;

	if (!gz)
		return errno ? -errno : -ENOMEM;
	while ((n = gzread(gz, buf, sizeof(buf))) > 0) {
		char *t = realloc(text, len + n + 1);

		if (!t) {
			free(text);
			gzclose(gz);
			return -ENOMEM;
		}
		text = t;
		memcpy(text + len, buf, n);
		len += n;
		text[len] = 0;
	}
	gzclose(gz);
	if (n < 0 || !text) {
		free(text);
		return -EINVAL;
	}
	free(kconfig_text);
	kconfig_text = text;
	free((char *)kconfig_path);
	kconfig_path = strdup(path);
	kconfig_tried = true;
	return 0;
}

static void kconfig_find(void)
{
	struct utsname u;
	char path[PATH_MAX];

	if (kconfig_tried)
		return;
	kconfig_tried = true;
	if (tk_kconfig_load("/proc/config.gz") == 0)
		return;
	if (uname(&u) == 0) {
		snprintf(path, sizeof(path), "/boot/config-%s", u.release);
		if (tk_kconfig_load(path) == 0)
			return;
	}
	kconfig_tried = true;
}

const char *tk_kconfig_source(void)
{
	kconfig_find();
	return kconfig_path;
}

char tk_kconfig(const char *option)
{
	const char *line;
	char v;

	kconfig_find();
	if (!kconfig_text)
		return 0;
	for (line = kconfig_text; line && *line;) {
		if ((v = tk_kconfig_parse_line(line, option)))
			return v;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return 'n';  /* options that cannot be set are left out */
}

/* " (/proc/config.gz: CONFIG_X is not set)" when the config says so. */
static const char *kconfig_note(const char *option, char *buf, size_t size)
{
	char v = tk_kconfig(option);

	if (!v)
		*buf = 0;
	else if (v == 'n')
		snprintf(buf, size, " (%s: %s is not set)", tk_kconfig_source(), option);
	else
		snprintf(buf, size, " (%s: %s=%c)", tk_kconfig_source(), option, v);
	return buf;
}
#define KNOTE(opt) kconfig_note((opt), (char[160]){ 0 }, 160)

/* ---- a child in a private mount namespace ---- */

typedef int (*ns_fn)(char *out, size_t size, void *arg);

/* After unshare(CLONE_NEWNS): keep what this process mounts from
 * reaching the namespace it came from. In a chroot whose root is not a
 * mount point, "/" cannot be made private (EINVAL); /sys, where tracefs
 * and securityfs are mounted, then is. 0 or -errno. */
static int make_mounts_private(void)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0)
		return 0;
	if (errno == EINVAL && mount(NULL, "/sys", NULL, MS_REC | MS_PRIVATE, NULL) == 0)
		return 0;
	return -errno;
}

/* Run fn in a child process with a mount namespace of its own, so what
 * it mounts vanishes with it. Returns fn's result (0 or -errno), or the
 * -errno of setting the namespace up, and then *no_ns is true (a
 * container without unshare, say); out gets fn's text. */
static int in_private_mounts(ns_fn fn, void *arg, char *out, size_t size,
			     bool *no_ns)
{
	int p[2], res[2] = { 0, 0 }, status;
	char buf[1024];
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	*out = 0;
	*no_ns = false;
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		res[1] = -errno;
		close(p[0]);
		close(p[1]);
		return res[1];
	}
	if (pid == 0) {
		char text[1024] = "";

		close(p[0]);
		/* res: whether the namespace was set up, then the error. */
		res[1] = unshare(CLONE_NEWNS) ? -errno : make_mounts_private();
		if (!res[1]) {
			res[0] = 1;
			res[1] = fn(text, sizeof(text), arg);
		}
		if (write(p[1], res, sizeof(res)) != sizeof(res) ||
		    write(p[1], text, strlen(text)) < 0)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	while (got < sizeof(buf) - 1 &&
	       (n = read(p[0], buf + got, sizeof(buf) - 1 - got)) > 0)
		got += n;
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (got < sizeof(res))
		return -ECHILD;
	memcpy(res, buf, sizeof(res));
	buf[got] = 0;
	copy(out, size, buf + sizeof(res));
	*no_ns = !res[0];
	return res[1];
}

/* Mount tracefs for real, as the tools do, where no private namespace
 * can be had; probe_tracefs says so. */
static bool doctor_mounted_tracefs;

static int mount_tracefs_for_real(void)
{
	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL))
		return -errno;
	doctor_mounted_tracefs = true;
	return 0;
}

/* ---- BPF programs and perf events ---- */

/* r0 = 0; exit: valid for every program type used here. */
static const struct bpf_insn ret0[] = {
	{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
	{ .code = BPF_JMP | BPF_EXIT },
};

static int load_prog(enum bpf_prog_type type, enum bpf_attach_type eat,
		     int btf_id)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = eat,
		    .attach_btf_id = btf_id);
	int fd = bpf_prog_load(type, "tk_doctor", "GPL", ret0, 2, &opts);

	return fd < 0 ? (errno ? -errno : fd) : fd;
}

bool tk_bpf_has_atomics(void)
{
	static int known = -1;  /* the answer does not change: probe once */
	/* *(u64 *)(fp - 8) = 0; r0 = cmpxchg(fp - 8, r0 = 0, r1 = 1);
	 * r0 = 0; exit. A kernel before BPF_ATOMIC's compare-and-swap
	 * (5.12) refuses the instruction ("BPF_STX uses reserved fields"). */
	static const struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_STX | BPF_DW | BPF_MEM, .dst_reg = BPF_REG_10,
		  .src_reg = BPF_REG_0, .off = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 1 },
		{ .code = BPF_STX | BPF_DW | BPF_ATOMIC, .dst_reg = BPF_REG_10,
		  .src_reg = BPF_REG_1, .off = -8, .imm = BPF_CMPXCHG },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd;

	if (known < 0) {
		fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "tk_atomics", "GPL", prog,
				   sizeof(prog) / sizeof(prog[0]), NULL);
		known = fd >= 0;
		if (fd >= 0)
			close(fd);
	}
	return known;
}

static int perf_open(__u32 type, __u64 config, __u64 config1, __u64 config2)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = type,
		.config = config,
		.config1 = config1,
		.config2 = config2,
		.sample_period = 1,
		.wakeup_events = 1,
	};
	int fd = syscall(__NR_perf_event_open, &attr, -1, 0, -1,
			 PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static int perf_attach(int pfd, int prog)
{
	if (ioctl(pfd, PERF_EVENT_IOC_SET_BPF, prog) ||
	    ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0))
		return -errno;
	return 0;
}

static int pmu_type(const char *pmu)
{
	char path[128];
	long long v;
	int err;

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", pmu);
	err = read_long(path, &v);
	return err ? err : (int)v;
}

/* ---- tracefs ---- */

/* Where tracefs is mounted, of the two places tools look: by the mount
 * table, since its directories are not readable to every user. */
static const char *tracefs_mounted(void)
{
	static const char *const roots[] = { "/sys/kernel/tracing",
					     "/sys/kernel/debug/tracing" };
	char line[PATH_MAX + 256], dir[PATH_MAX], type[64];
	const char *found = NULL;
	size_t i;
	FILE *f = fopen("/proc/self/mounts", "re");

	if (!f) {  /* no /proc: go by what can be seen */
		for (i = 0; i < 2; i++)
			if (access(roots[i], F_OK) == 0 &&
			    access(roots[i], R_OK) == 0)
				return roots[i];
		return NULL;
	}
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %4095s %63s", dir, type) != 2 ||
		    strcmp(type, "tracefs"))
			continue;
		for (i = 0; i < 2; i++)
			if (!strcmp(dir, roots[i]))
				found = roots[i];
	}
	fclose(f);
	return found;
}

/* In the private namespace: mount tracefs, then read arg (a path under
 * it) into out, or just report success when arg is NULL. */
static int ns_tracefs(char *out, size_t size, void *arg)
{
	char path[256];
	int err;

	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL))
		return -errno;
	if (!arg)
		return 0;
	snprintf(path, sizeof(path), "/sys/kernel/tracing/%s", (const char *)arg);
	err = read_text(path, out, size);
	return err;
}

/* A tracepoint's perf id; how it was found goes to how. */
static int tracepoint_id(const char *cat, const char *name, char *how,
			 size_t size)
{
	const char *root = tracefs_mounted();
	char rel[192], path[256], buf[64];
	int err;

	snprintf(rel, sizeof(rel), "events/%s/%s/id", cat, name);
	if (root) {
		snprintf(path, sizeof(path), "%s/%s", root, rel);
		snprintf(how, size, "tracefs at %s", root);
		err = read_text(path, buf, sizeof(buf));
	} else {
		bool no_ns;

		snprintf(how, size, "tracefs not mounted: id read in a private mount; tools mount it at /sys/kernel/tracing");
		err = in_private_mounts(ns_tracefs, rel, buf, sizeof(buf), &no_ns);
		if (no_ns && err != -EPERM && mount_tracefs_for_real() == 0) {
			snprintf(how, size, "tracefs mounted at /sys/kernel/tracing by %s",
				 tk_tool_name());
			snprintf(path, sizeof(path), "/sys/kernel/tracing/%s", rel);
			err = read_text(path, buf, sizeof(buf));
		}
	}
	return err ? err : atoi(buf);
}

static void probe_tracefs(struct tk_feature *f)
{
	const char *root = tracefs_mounted();
	char out[16], events[PATH_MAX];
	bool no_ns;
	int err;

	if (root) {
		snprintf(events, sizeof(events), "%s/events", root);
		if (access(events, R_OK | X_OK))
			say(f, false, "mounted at %s, but %s: %s; run as root", root,
			    events, ERR(-errno));
		else if (doctor_mounted_tracefs)
			say(f, true, "was not mounted; mounted by %s at %s (no private mount namespace here to try it in)",
			    tk_tool_name(), root);
		else
			say(f, true, "mounted at %s", root);
		return;
	}
	err = in_private_mounts(ns_tracefs, NULL, out, sizeof(out), &no_ns);
	if (!err) {
		say(f, true, "not mounted; mountable (tried in a private mount namespace): tools mount it at /sys/kernel/tracing when they need it");
		return;
	}
	if (err == -EPERM && !tk_privileged()) {
		say(f, false, "not mounted; mounting needs root (mount -t tracefs nodev /sys/kernel/tracing)");
		return;
	}
	if (err == -ENODEV) {
		say(f, false, "not mounted, and this kernel has no tracefs%s; use a kernel with CONFIG_TRACING=y",
		    KNOTE("CONFIG_TRACING"));
		return;
	}
	if (no_ns && (err = mount_tracefs_for_real()) == 0) {
		say(f, true, "was not mounted; mounted by %s at /sys/kernel/tracing (no private mount namespace here to try it in)",
		    tk_tool_name());
		return;
	}
	say(f, false, "not mounted, and mounting it failed: %s; mount -t tracefs nodev /sys/kernel/tracing",
	    ERR(err));
}

/* ---- the probes ---- */

static void probe_btf(struct tk_feature *f)
{
	struct btf *btf;
	int err;

	if (access("/sys/kernel/btf/vmlinux", F_OK) == 0 &&
	    access("/sys/kernel/btf/vmlinux", R_OK)) {
		err = -errno;
		say(f, false, "/sys/kernel/btf/vmlinux: %s%s", ERR(err),
		    err == -EACCES ? "; run as root" : "");
		return;
	}
	btf = btf__load_vmlinux_btf();
	if (!btf) {
		err = -errno;
		say(f, false, "no kernel BTF (/sys/kernel/btf/vmlinux: %s)%s; use a kernel built with CONFIG_DEBUG_INFO_BTF=y, or give tools --btf FILE",
		    ERR(err), KNOTE("CONFIG_DEBUG_INFO_BTF"));
		return;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK) == 0)
		say(f, true, "/sys/kernel/btf/vmlinux: %u types", btf__type_cnt(btf) - 1);
	else
		say(f, true, "no /sys/kernel/btf/vmlinux; libbpf found the kernel's BTF in /boot or /usr/lib/debug (%u types)",
		    btf__type_cnt(btf) - 1);
	btf__free(btf);
}

/* Create a map of that type: 0, or -errno (EINVAL: an unknown type). */
static int try_map(enum bpf_map_type type)
{
	bool ring = type == BPF_MAP_TYPE_RINGBUF;
	long page = sysconf(_SC_PAGESIZE);
	int fd = bpf_map_create(type, "tk_doctor", ring ? 0 : 4, ring ? 0 : 4,
				ring ? (page > 0 ? page : 4096) : 1, NULL);

	if (fd < 0)
		return errno ? -errno : fd;
	close(fd);
	return 0;
}

static void probe_map(struct tk_feature *f, enum bpf_map_type type,
		      const char *type_name, const char *missing)
{
	int err = try_map(type);

	if (!err)
		say(f, true, "%s map created", type_name);
	else if (err == -EINVAL && tk_privileged())
		say(f, false, "this kernel has no %s%s", type_name, missing);
	else
		say(f, false, "cannot create a %s map: %s%s", type_name, ERR(err),
		    perm_hint(err));
}

static void probe_perf_buffer(struct tk_feature *f)
{
	int fd;

	probe_map(f, BPF_MAP_TYPE_PERF_EVENT_ARRAY, "BPF_MAP_TYPE_PERF_EVENT_ARRAY",
		  " (CONFIG_BPF_EVENTS)");
	if (!f->ok)
		return;
	fd = perf_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, 0, 0);
	if (fd < 0) {
		say(f, false, "BPF_MAP_TYPE_PERF_EVENT_ARRAY map created, but no PERF_COUNT_SW_BPF_OUTPUT event: %s%s",
		    ERR(fd), perm_hint(fd));
		return;
	}
	close(fd);
	say(f, true, "BPF_MAP_TYPE_PERF_EVENT_ARRAY map and a PERF_COUNT_SW_BPF_OUTPUT event created");
}

static void probe_tracepoints(struct tk_feature *f)
{
	char how[160];
	int id, prog, pfd, err;

	id = tracepoint_id(TP_CATEGORY, TP_NAME, how, sizeof(how));
	if (id < 0) {
		if (id == -ENOENT)
			say(f, false, "no tracepoint %s/%s in tracefs (%s)%s; use a kernel with CONFIG_TRACEPOINTS=y",
			    TP_CATEGORY, TP_NAME, how, KNOTE("CONFIG_TRACEPOINTS"));
		else
			say(f, false, "cannot read the id of tracepoint %s/%s: %s (%s)%s",
			    TP_CATEGORY, TP_NAME, ERR(id), how, perm_hint(id));
		return;
	}
	prog = load_prog(BPF_PROG_TYPE_TRACEPOINT, 0, 0);
	if (prog < 0) {
		say(f, false, "tracepoint program load refused: %s%s", ERR(prog),
		    perm_hint(prog));
		return;
	}
	pfd = perf_open(PERF_TYPE_TRACEPOINT, id, 0, 0);
	err = pfd < 0 ? pfd : perf_attach(pfd, prog);
	if (pfd >= 0)
		close(pfd);
	close(prog);
	if (err)
		say(f, false, "cannot attach to tracepoint %s/%s: %s%s", TP_CATEGORY,
		    TP_NAME, ERR(err), perm_hint(err));
	else
		say(f, true, "attached to tracepoint %s/%s (id %d, %s)", TP_CATEGORY,
		    TP_NAME, id, how);
}

static void probe_raw_tp(struct tk_feature *f)
{
	int prog = load_prog(BPF_PROG_TYPE_RAW_TRACEPOINT, 0, 0), link;

	if (prog < 0) {
		say(f, false, "raw tracepoint program load refused: %s%s",
		    ERR(prog), perm_hint(prog));
		return;
	}
	link = bpf_raw_tracepoint_open(TP_NAME, prog);
	if (link < 0)
		link = errno ? -errno : link;
	close(prog);
	if (link < 0) {
		say(f, false, "cannot attach to raw tracepoint %s: %s%s", TP_NAME,
		    ERR(link), perm_hint(link));
		return;
	}
	close(link);
	say(f, true, "attached to raw tracepoint %s", TP_NAME);
}

/* Load a BPF_PROG_TYPE_TRACING program at name and attach it: tp_btf and
 * fentry. 0, or -errno with *stage "BTF", "load" or "attach". */
static int try_tracing(const char *name, enum bpf_attach_type eat,
		       const char **stage)
{
	int id, prog, link;

	*stage = "BTF";
	id = libbpf_find_vmlinux_btf_id(name, eat);
	if (id < 0)
		return id;
	*stage = "load";
	prog = load_prog(BPF_PROG_TYPE_TRACING, eat, id);
	if (prog < 0)
		return prog;
	*stage = "attach";
	link = bpf_raw_tracepoint_open(NULL, prog);
	if (link < 0)
		link = errno ? -errno : link;
	close(prog);
	if (link < 0)
		return link;
	close(link);
	return 0;
}

static void probe_tp_btf(struct tk_feature *f)
{
	const char *stage;
	int err = try_tracing(TP_NAME, BPF_TRACE_RAW_TP, &stage);

	if (!err)
		say(f, true, "attached to BTF tracepoint %s", TP_NAME);
	else if (*stage == 'B')
		say(f, false, "no BTF for tracepoint %s: %s; needs kernel BTF (CONFIG_DEBUG_INFO_BTF=y)",
		    TP_NAME, ERR(err));
	else
		say(f, false, "BTF tracepoint %s: %s refused: %s%s", TP_NAME, stage,
		    ERR(err), perm_hint(err));
}

static void probe_fentry(struct tk_feature *f)
{
	static const char fix[] =
		"fentry needs CONFIG_FUNCTION_TRACER=y and CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS=y";
	char ft = tk_kconfig("CONFIG_FUNCTION_TRACER");
	char dc = tk_kconfig("CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS");
	const char *stage;
	int err = try_tracing(KFUNC, BPF_TRACE_FENTRY, &stage);

	if (!err) {
		say(f, true, "attached to %s (BPF trampoline)", KFUNC);
		return;
	}
	if (*stage == 'B') {
		say(f, false, "no BTF for %s: %s; needs kernel BTF (CONFIG_DEBUG_INFO_BTF=y)",
		    KFUNC, ERR(err));
		return;
	}
	if (*perm_hint(err)) {
		say(f, false, "fentry %s of %s refused: %s%s", stage, KFUNC,
		    ERR(err), perm_hint(err));
		return;
	}
	if (ft == 'y' && dc == 'y')  /* the config says it should work */
		say(f, false, "fentry %s of %s refused: %s, though %s has CONFIG_FUNCTION_TRACER=y and CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS=y: something else (a security module, the hypervisor) forbids BPF trampolines here; tools use kprobes instead where they exist",
		    stage, KFUNC, ERR(err), tk_kconfig_source());
	else if (ft || dc)
		say(f, false, "fentry %s of %s refused: %s (%s: CONFIG_FUNCTION_TRACER%s, CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS%s); %s",
		    stage, KFUNC, ERR(err), tk_kconfig_source(),
		    ft == 'y' ? "=y" : " is not set", dc == 'y' ? "=y" : " is not set", fix);
	else
		say(f, false, "fentry %s of %s refused: %s; %s", stage, KFUNC,
		    ERR(err), fix);
}

/* ---- kprobes and uprobes ---- */

/* Attach a kprobe program to a perf event opened by open_event(arg):
 * 0 or -errno, with *stage "load", "event" or "attach". */
static int try_probe_event(int type, __u64 config1, __u64 config2,
			   const char **stage)
{
	int prog, pfd, err;

	*stage = "load";
	prog = load_prog(BPF_PROG_TYPE_KPROBE, 0, 0);
	if (prog < 0)
		return prog;
	*stage = "event";
	pfd = perf_open(type, 0, config1, config2);
	if (pfd < 0) {
		close(prog);
		return pfd;
	}
	*stage = "attach";
	err = perf_attach(pfd, prog);
	close(pfd);
	close(prog);
	return err;
}

/* Kernels before the kprobe/uprobe PMUs (4.17) take probes through
 * tracefs: add one, attach to its tracepoint id, remove it. */
static int try_legacy_event(const char *kind, const char *spec,
			    const char **stage)
{
	const char *root = tracefs_mounted();
	char path[256], def[PATH_MAX + 128], name[64], buf[32];
	int fd, id, prog, pfd, err;

	*stage = "tracefs";
	if (!root)
		return -ENOENT;
	snprintf(name, sizeof(name), "tk_doctor_%d", (int)getpid());
	snprintf(path, sizeof(path), "%s/%s_events", root, kind);
	snprintf(def, sizeof(def), "p:tracekit/%s %s", name, spec);
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = write(fd, def, strlen(def)) < 0 ? -errno : 0;
	if (err) {
		close(fd);
		*stage = "event";
		return err;
	}
	snprintf(path, sizeof(path), "%s/events/tracekit/%s/id", root, name);
	err = read_text(path, buf, sizeof(buf));
	id = err ? err : atoi(buf);
	prog = id < 0 ? id : load_prog(BPF_PROG_TYPE_KPROBE, 0, 0);
	pfd = prog < 0 ? prog : perf_open(PERF_TYPE_TRACEPOINT, id, 0, 0);
	err = pfd < 0 ? pfd : perf_attach(pfd, prog);
	*stage = id < 0 ? "event" : prog < 0 ? "load" : "attach";
	if (pfd >= 0)
		close(pfd);
	if (prog >= 0)
		close(prog);
	snprintf(def, sizeof(def), "-:tracekit/%s", name);
	if (write(fd, def, strlen(def)) < 0 && !err)
		err = -errno;
	close(fd);
	return err;
}

static void probe_kprobes(struct tk_feature *f)
{
	static const char *const funcs[] = { KFUNC, "ksys_read", "schedule" };
	const char *stage = "event", *func = KFUNC;
	char kp[160], ev[160];
	size_t i;
	int type = pmu_type("kprobe"), err = -ENOENT;

	snprintf(kp, sizeof(kp), "%s", KNOTE("CONFIG_KPROBES"));
	snprintf(ev, sizeof(ev), "%s", KNOTE("CONFIG_KPROBE_EVENTS"));
	if (type >= 0) {
		/* A function can be missing (inlined, renamed): try another. */
		for (i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
			func = funcs[i];
			err = try_probe_event(type, (uintptr_t)func, 0, &stage);
			if (err != -ENOENT && err != -EINVAL)
				break;
		}
		if (!err)
			say(f, true, "attached to a kprobe on %s (kprobe PMU)", func);
		else
			say(f, false, "kprobe %s on %s failed: %s%s%s", stage, func,
			    ERR(err), perm_hint(err), kp);
		return;
	}
	if (tracefs_mounted()) {
		char path[160];

		snprintf(path, sizeof(path), "%s/kprobe_events", tracefs_mounted());
		if (access(path, F_OK) && errno != ENOENT) {
			say(f, false, "no kprobe PMU (/sys/bus/event_source/devices/kprobe); tracefs kprobe_events: %s%s%s",
			    ERR(-errno), perm_hint(-errno), kp);
			return;
		}
		if (access(path, F_OK) == 0) {
			snprintf(path, sizeof(path), "%s", KFUNC);
			err = try_legacy_event("kprobe", path, &stage);
			if (!err)
				say(f, true, "attached to a kprobe on %s (tracefs kprobe_events; no kprobe PMU)",
				    KFUNC);
			else
				say(f, false, "no kprobe PMU; kprobe_events %s on %s failed: %s%s",
				    stage, KFUNC, ERR(err), perm_hint(err));
			return;
		}
	}
	say(f, false, "no kprobe PMU (/sys/bus/event_source/devices/kprobe)%s%s%s; use a kernel with CONFIG_KPROBES=y and CONFIG_KPROBE_EVENTS=y",
	    tracefs_mounted() ? " and no kprobe_events in tracefs" : "", kp,
	    tk_kconfig("CONFIG_KPROBES") == 'y' ? ev : "");
}

/* What the uprobe probe attaches to: a function of this very program. */
__attribute__((noinline, used)) int tk_features_uprobe_target(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

int tk_maps_file_offset(FILE *maps, unsigned long addr, unsigned long *offset,
			char *path, size_t size)
{
	char line[PATH_MAX + 128];

	while (fgets(line, sizeof(line), maps)) {
		unsigned long start, end, off;
		int pos = 0;

		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s%n", &start, &end, &off,
			   &pos) < 3 || !pos)
			continue;
		if (addr < start || addr >= end)
			continue;
		while (line[pos] == ' ')
			pos++;
		line[strcspn(line, "\n")] = 0;
		if (line[pos] != '/')
			return -ENOENT;  /* anonymous or [special] */
		snprintf(path, size, "%s", line + pos);
		*offset = addr - start + off;
		return 0;
	}
	return -ENOENT;
}

static void probe_uprobes(struct tk_feature *f)
{
	unsigned long addr = (unsigned long)&tk_features_uprobe_target, off;
	char path[PATH_MAX], spec[PATH_MAX + 32];
	const char *stage;
	int type = pmu_type("uprobe"), err;
	FILE *maps = fopen("/proc/self/maps", "re");

	err = maps ? tk_maps_file_offset(maps, addr, &off, path, sizeof(path)) : -errno;
	if (maps)
		fclose(maps);
	if (err) {
		say(f, false, "cannot find this program's file in /proc/self/maps: %s", ERR(err));
		return;
	}
	if (strlen(path) > 10 && !strcmp(path + strlen(path) - 10, " (deleted)"))
		strcpy(path, "/proc/self/exe");  /* replaced since it started */
	if (type >= 0) {
		err = try_probe_event(type, (uintptr_t)path, off, &stage);
		if (!err)
			say(f, true, "attached to a uprobe on %s:0x%lx (uprobe PMU)", path, off);
		else
			say(f, false, "uprobe %s on %s:0x%lx failed: %s%s", stage, path,
			    off, ERR(err), perm_hint(err));
		return;
	}
	snprintf(spec, sizeof(spec), "%s:0x%lx", path, off);
	err = try_legacy_event("uprobe", spec, &stage);
	if (!err)
		say(f, true, "attached to a uprobe on %s (tracefs uprobe_events; no uprobe PMU)", spec);
	else if (!strcmp(stage, "tracefs"))
		say(f, false, "no uprobe PMU (/sys/bus/event_source/devices/uprobe) and no tracefs uprobe_events%s; use a kernel with CONFIG_UPROBE_EVENTS=y",
		    KNOTE("CONFIG_UPROBE_EVENTS"));
	else
		say(f, false, "no uprobe PMU; uprobe_events %s on %s failed: %s%s%s",
		    stage, spec, ERR(err), perm_hint(err), KNOTE("CONFIG_UPROBE_EVENTS"));
}

/* ---- kernel settings ---- */

int tk_lockdown_parse(const char *text, char *mode, size_t size)
{
	const char *open = strchr(text, '['), *close;

	if (!open || !(close = strchr(open, ']')) || close == open + 1 ||
	    (size_t)(close - open - 1) >= size)
		return -EINVAL;
	memcpy(mode, open + 1, close - open - 1);
	mode[close - open - 1] = 0;
	return 0;
}

static int ns_lockdown(char *out, size_t size, void *arg)
{
	(void)arg;
	if (mount("securityfs", "/sys/kernel/security", "securityfs", 0, NULL))
		return -errno;
	if (access("/sys/kernel/security/lockdown", F_OK))
		return -ENOENT;
	return read_text("/sys/kernel/security/lockdown", out, size);
}

static void probe_lockdown(struct tk_feature *f)
{
	char text[128] = "";
	const char *via = "";
	int err;

	if (access("/sys/kernel/security/lsm", F_OK) == 0) {  /* mounted */
		err = access("/sys/kernel/security/lockdown", F_OK) ? -ENOENT :
		      read_text("/sys/kernel/security/lockdown", text, sizeof(text));
	} else {
		bool no_ns;

		err = in_private_mounts(ns_lockdown, NULL, text, sizeof(text), &no_ns);
		via = " (securityfs read in a private mount)";
	}
	if (err == -ENOENT) {
		snprintf(f->mode, sizeof(f->mode), "none");
		say(f, true, "none: no lockdown LSM in this kernel%s", via);
		return;
	}
	if (err || tk_lockdown_parse(text, f->mode, sizeof(f->mode))) {
		f->mode[0] = 0;
		say(f, true, "unknown: cannot read /sys/kernel/security/lockdown: %s%s",
		    ERR(err ? err : -EINVAL),
		    err == -EPERM && !tk_privileged() ? " (mounting securityfs needs root)" : "");
		return;
	}
	if (!strcmp(f->mode, "none"))
		say(f, true, "none: BPF and perf may read kernel memory%s", via);
	else if (!strcmp(f->mode, "integrity"))
		say(f, true, "integrity: blocks bpf_probe_write_user, kprobe return overrides and unsigned modules; reading kernel memory (bpf_probe_read_kernel) still works%s",
		    via);
	else if (!strcmp(f->mode, "confidentiality"))
		say(f, false, "confidentiality: blocks bpf_probe_read_kernel, kprobes, perf kernel sampling and tracefs, so tools cannot read kernel data%s; boot with lockdown=integrity (or none), or without Secure Boot's automatic lockdown",
		    via);
	else
		say(f, true, "%s%s", f->mode, via);
}

static void probe_paranoid(struct tk_feature *f)
{
	long long v;
	int err = read_long("/proc/sys/kernel/perf_event_paranoid", &v);
	bool perfmon = have_cap(CAP_SYS_ADMIN) ||
		       (kernel_knows_cap_bpf() && have_cap(CAP_PERFMON));
	const char *what;

	if (err) {
		say(f, true, "cannot read /proc/sys/kernel/perf_event_paranoid: %s", ERR(err));
		return;
	}
	f->value_kind = TK_VALUE_INT;
	f->value = v;
	what = v >= 3 ? "users without CAP_PERFMON may not use perf_event_open at all" :
	       v == 2 ? "users without CAP_PERFMON may not profile the kernel" :
	       v == 1 ? "users without CAP_PERFMON may not use CPU-wide events" :
	       v == 0 ? "users without CAP_PERFMON may not read raw tracepoint data" :
			"no restriction";
	if (v <= -1)
		say(f, true, "%lld: %s", v, what);
	else if (perfmon)
		say(f, true, "%lld: %s; this process has %s, so it does not apply",
		    v, what, have_cap(CAP_SYS_ADMIN) ? "CAP_SYS_ADMIN" : "CAP_PERFMON");
	else
		say(f, false, "%lld: %s; run tools as root (or with CAP_PERFMON)", v, what);
}

static void probe_unpriv_bpf(struct tk_feature *f)
{
	long long v;
	int err = read_long("/proc/sys/kernel/unprivileged_bpf_disabled", &v);

	if (err) {
		say(f, true, "cannot read /proc/sys/kernel/unprivileged_bpf_disabled: %s", ERR(err));
		return;
	}
	f->value_kind = TK_VALUE_INT;
	f->value = v;
	say(f, true, "%s (kernel.unprivileged_bpf_disabled=%lld); tracing needs CAP_BPF and CAP_PERFMON (or root) either way",
	    v == 0 ? "allowed: users without CAP_BPF may load socket filters" :
	    v == 1 ? "disabled until reboot: only processes with CAP_BPF may use bpf()" :
		     "disabled: only processes with CAP_BPF may use bpf()",
	    v);
}

static void probe_bpf_stats(struct tk_feature *f)
{
	long long v;
	int err = read_long("/proc/sys/kernel/bpf_stats_enabled", &v);

	if (err) {
		say(f, true, "no kernel.bpf_stats_enabled: %s", ERR(err));
		return;
	}
	f->value_kind = TK_VALUE_INT;
	f->value = v;
	if (v)
		say(f, true, "on (kernel.bpf_stats_enabled=%lld): the kernel counts run time per BPF program", v);
	else
		say(f, true, "off (kernel.bpf_stats_enabled=0): no run time per BPF program; sysctl kernel.bpf_stats_enabled=1 turns it on");
}

/* ---- this process ---- */

static void probe_capabilities(struct tk_feature *f)
{
	static const struct { unsigned cap; const char *name; } caps[] = {
		{ CAP_BPF, "CAP_BPF" }, { CAP_PERFMON, "CAP_PERFMON" },
		{ CAP_SYS_ADMIN, "CAP_SYS_ADMIN" },
		{ CAP_SYS_RESOURCE, "CAP_SYS_RESOURCE" },
	};
	char have[128] = "", lack[128] = "";
	bool new_caps = kernel_knows_cap_bpf();
	size_t i;

	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		char *to = have_cap(caps[i].cap) ? have : lack;

		if (caps[i].cap >= CAP_PERFMON && !new_caps)
			continue;
		snprintf(to + strlen(to), sizeof(have) - strlen(to), "%s%s",
			 *to ? " " : "", caps[i].name);
	}
	if (tk_privileged())
		say(f, true, "effective: %s%s%s%s%s", *have ? have : "none",
		    *lack ? "; missing: " : "", lack,
		    !have_cap(CAP_SYS_RESOURCE) ? " (needed only to raise RLIMIT_MEMLOCK: see memlock)" : "",
		    new_caps ? "" : " (this kernel predates CAP_BPF and CAP_PERFMON: CAP_SYS_ADMIN does it all)");
	else if (new_caps)
		say(f, false, "effective: %s; missing: %s; tracing needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN): run as root",
		    *have ? have : "none", lack);
	else
		say(f, false, "effective: %s; this kernel predates CAP_BPF and CAP_PERFMON, so tracing needs CAP_SYS_ADMIN: run as root",
		    *have ? have : "none");
}

static void fmt_bytes(unsigned long long b, char *buf, size_t size)
{
	if (b >= (1ULL << 30) && !(b % (1ULL << 30)))
		snprintf(buf, size, "%llu GiB", b >> 30);
	else if (b >= (1ULL << 20) && !(b % (1ULL << 20)))
		snprintf(buf, size, "%llu MiB", b >> 20);
	else if (b >= 1024 && !(b % 1024))
		snprintf(buf, size, "%llu KiB", b >> 10);
	else
		snprintf(buf, size, "%llu bytes", b);
}

/* Does the kernel charge BPF memory to the memory cgroup rather than
 * RLIMIT_MEMLOCK (5.11)? Create a map under a zero limit, in a child so
 * that this process keeps its own limit: 1, 0, or -errno. */
static int memcg_accounting(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		struct rlimit zero = { 0, 0 };
		union bpf_attr attr;
		int fd;

		if (setrlimit(RLIMIT_MEMLOCK, &zero))
			_exit(100);
		memset(&attr, 0, sizeof(attr));
		attr.map_type = BPF_MAP_TYPE_ARRAY;
		attr.key_size = 4;
		attr.value_size = 8;
		attr.max_entries = 1;
		/* The raw call: libbpf would raise the limit first. */
		fd = syscall(__NR_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
		_exit(fd >= 0 ? 0 : errno == EPERM ? 1 : errno < 100 ? errno + 2 : 101);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(status) || WEXITSTATUS(status) >= 100)
		return -ECHILD;
	if (WEXITSTATUS(status) == 0)
		return 1;
	if (WEXITSTATUS(status) == 1)
		return tk_privileged() ? 0 : -EPERM;  /* EPERM: over the limit */
	return -(WEXITSTATUS(status) - 2);
}

static void probe_memlock(struct tk_feature *f)
{
	char lim[48];
	int memcg;

	if (start_memlock_err) {
		say(f, false, "cannot read RLIMIT_MEMLOCK: %s", ERR(start_memlock_err));
		return;
	}
	if (start_memlock.rlim_cur == RLIM_INFINITY) {
		f->value_kind = TK_VALUE_NULL;
		snprintf(lim, sizeof(lim), "unlimited");
	} else {
		f->value_kind = TK_VALUE_INT;
		f->value = start_memlock.rlim_cur;
		fmt_bytes(start_memlock.rlim_cur, lim, sizeof(lim));
	}
	memcg = memcg_accounting();
	if (memcg > 0)
		say(f, true, "RLIMIT_MEMLOCK %s; does not matter: the kernel charges BPF memory to the memory cgroup (a map was created under a zero limit)",
		    lim);
	else if (memcg < 0)
		say(f, start_memlock.rlim_cur == RLIM_INFINITY,
		    "RLIMIT_MEMLOCK %s; could not try whether the kernel charges BPF memory to it (%s)%s",
		    lim, ERR(memcg), perm_hint(memcg));
	else if (start_memlock.rlim_cur == RLIM_INFINITY)
		say(f, true, "RLIMIT_MEMLOCK unlimited; this kernel charges BPF maps and programs to it");
	else if (have_cap(CAP_SYS_RESOURCE))
		say(f, true, "RLIMIT_MEMLOCK %s, which this kernel charges BPF maps and programs to; libbpf raises it (this process has CAP_SYS_RESOURCE)",
		    lim);
	else
		say(f, false, "RLIMIT_MEMLOCK %s, which this kernel charges BPF maps and programs to, and this process cannot raise it (no CAP_SYS_RESOURCE): ulimit -l unlimited, or LimitMEMLOCK=infinity under systemd",
		    lim);
}

void tk_feature_probe(enum tk_feature_id id, struct tk_feature *out)
{
	memset(out, 0, sizeof(*out));
	switch (id) {
	case TK_FEAT_BTF: probe_btf(out); break;
	case TK_FEAT_RINGBUF:
		probe_map(out, BPF_MAP_TYPE_RINGBUF, "BPF_MAP_TYPE_RINGBUF",
			  " (the BPF ring buffer came in Linux 5.8); tools use the perf buffer instead");
		break;
	case TK_FEAT_PERF_BUFFER: probe_perf_buffer(out); break;
	case TK_FEAT_TRACEPOINTS: probe_tracepoints(out); break;
	case TK_FEAT_RAW_TP: probe_raw_tp(out); break;
	case TK_FEAT_TP_BTF: probe_tp_btf(out); break;
	case TK_FEAT_FENTRY: probe_fentry(out); break;
	case TK_FEAT_KPROBES: probe_kprobes(out); break;
	case TK_FEAT_UPROBES: probe_uprobes(out); break;
	case TK_FEAT_TRACEFS: probe_tracefs(out); break;
	case TK_FEAT_LOCKDOWN: probe_lockdown(out); break;
	case TK_FEAT_PERF_EVENT_PARANOID: probe_paranoid(out); break;
	case TK_FEAT_UNPRIVILEGED_BPF: probe_unpriv_bpf(out); break;
	case TK_FEAT_BPF_STATS: probe_bpf_stats(out); break;
	case TK_FEAT_CAPABILITIES: probe_capabilities(out); break;
	case TK_FEAT_MEMLOCK: probe_memlock(out); break;
	default: say(out, false, "unknown feature %d", (int)id); break;
	}
}

/* ---- tools: --dry-run ---- */

int tk_tool_check_parse(const char *text, struct tk_tool_check *out)
{
	const char *line = text, *next;

	while (line && *line) {
		size_t len;
		char buf[512], *name, *method, *target, *save = NULL;

		next = strchr(line, '\n');
		len = next ? (size_t)(next - line) : strlen(line);
		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
		memcpy(buf, line, len);
		buf[len] = 0;
		line = next ? next + 1 : NULL;

		if (!strncmp(buf, "transport ", 10)) {
			copy(out->transport, sizeof(out->transport), buf + 10);
			continue;
		}
		if (strncmp(buf, "probe ", 6))
			continue;
		name = strtok_r(buf + 6, " ", &save);
		method = name ? strtok_r(NULL, " ", &save) : NULL;
		target = method ? save : NULL;
		if (!method)
			continue;
		{
			struct tk_dry_probe *p = realloc(out->probes,
				(out->n_probes + 1) * sizeof(*p));

			if (!p)
				return -ENOMEM;
			out->probes = p;
			p += out->n_probes++;
			memset(p, 0, sizeof(*p));
			copy(p->probe, sizeof(p->probe), name);
			copy(p->method, sizeof(p->method), method);
			copy(p->target, sizeof(p->target), target ? target : "");
		}
	}
	return 0;
}

void tk_tool_check_free(struct tk_tool_check *c)
{
	free(c->probes);
	c->probes = NULL;
	c->n_probes = 0;
}

bool tk_is_tracekit_tool(const char *path)
{
	static const char marker[] = "TRACEKIT_READY_FD";
	const size_t m = sizeof(marker) - 1;
	char buf[65536];
	size_t keep = 0;
	struct stat st;
	bool found = false;
	ssize_t n;
	int fd;

	if (stat(path, &st) || !S_ISREG(st.st_mode) || access(path, X_OK))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	/* Chunks overlapping by the marker's length, so none is missed. */
	while (!found && (n = read(fd, buf + keep, sizeof(buf) - keep)) > 0) {
		size_t len = keep + n;

		found = memmem(buf, len, marker, m) != NULL;
		keep = len < m ? len : m - 1;
		memmove(buf, buf + len - keep, keep);
	}
	close(fd);
	return found;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct capture {
	int fd;
	char *buf;
	size_t len;
};

/* Read what is there; false at end of file. Keeps up to 1 MiB. */
static bool drain(struct capture *c)
{
	char tmp[4096];
	ssize_t n = read(c->fd, tmp, sizeof(tmp));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0)
		return false;
	if (c->len + n < (1 << 20)) {
		char *b = realloc(c->buf, c->len + n + 1);

		if (b) {
			memcpy(b + c->len, tmp, n);
			c->len += n;
			b[c->len] = 0;
			c->buf = b;
		}
	}
	return true;
}

/* The last non-empty line of text, into buf. */
static void last_line(const char *text, char *buf, size_t size)
{
	const char *end = text + strlen(text), *start;

	while (end > text && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	start = end;
	while (start > text && start[-1] != '\n')
		start--;
	snprintf(buf, size, "%.*s", (int)(end - start), start);
}

int tk_tool_check_run(const char *path, const char *const *args,
		      double timeout_s, struct tk_tool_check *out)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	struct capture cap[2] = { { -1, NULL, 0 }, { -1, NULL, 0 } };
	int po[2], pe[2], status = 0, i, n_args = 0, err = 0;
	double deadline = now() + timeout_s;
	bool timed_out = false, reaped = false;
	const char **argv;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	while (args && args[n_args])
		n_args++;
	argv = calloc(n_args + 3, sizeof(*argv));
	if (!argv)
		return -ENOMEM;
	argv[0] = path;
	argv[1] = "--dry-run";
	for (i = 0; i < n_args; i++)
		argv[i + 2] = args[i];
	if (pipe2(po, O_CLOEXEC) || (pipe2(pe, O_CLOEXEC) && (close(po[0]), close(po[1]), 1))) {
		free(argv);
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(po[0]); close(po[1]); close(pe[0]); close(pe[1]);
		free(argv);
		return err;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		setpgid(0, 0);  /* a group of its own: killed as one */
		if (null >= 0)
			dup2(null, STDIN_FILENO);
		dup2(po[1], STDOUT_FILENO);
		dup2(pe[1], STDERR_FILENO);
		/* The doctor leaves nothing changed: a tool that mounts tracefs
		 * to look a tracepoint up does it in a mount namespace of its
		 * own. Where none can be had, it runs as it would by hand. */
		if (unshare(CLONE_NEWNS) == 0 && (err = make_mounts_private())) {
			dprintf(STDERR_FILENO, "%s: cannot make its mounts private: %s\n",
				base, strerror(-err));
			_exit(126);
		}
		signal(SIGPIPE, SIG_DFL);
		execv(path, (char *const *)argv);
		dprintf(STDERR_FILENO, "%s: cannot run %s: %s\n", base, path,
			strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	free(argv);
	close(po[1]);
	close(pe[1]);
	cap[0].fd = po[0];
	cap[1].fd = pe[0];

	/* Read both pipes until the tool exits, or until the deadline. */
	while (!reaped) {
		struct pollfd pfd[2];
		int nfd = 0, left = (int)((deadline - now()) * 1000);

		if (left <= 0) {
			timed_out = true;
			break;
		}
		if (tk_exiting())  /* SIGINT or SIGTERM to the caller */
			break;
		for (i = 0; i < 2; i++)
			if (cap[i].fd >= 0)
				pfd[nfd++] = (struct pollfd){ .fd = cap[i].fd, .events = POLLIN };
		if (!nfd)
			usleep(10000);
		else if (poll(pfd, nfd, left < 100 ? left : 100) < 0 && errno != EINTR)
			break;
		for (i = 0; i < nfd; i++) {
			struct capture *c = pfd[i].fd == cap[0].fd ? &cap[0] : &cap[1];

			if (pfd[i].revents && !drain(c)) {
				close(c->fd);
				c->fd = -1;
			}
		}
		reaped = waitpid(pid, &status, WNOHANG) == pid;
	}
	/* What it wrote before it exited (a child of its own may hold the
	 * pipes open: take only what is there). */
	for (i = 0; reaped && i < 2; i++) {
		struct pollfd one = { .fd = cap[i].fd, .events = POLLIN };
		int reads = 0;

		while (cap[i].fd >= 0 && reads++ < 256 && poll(&one, 1, 0) > 0 &&
		       drain(&cap[i]))
			;
	}
	if (!reaped) {
		kill(-pid, SIGKILL);  /* the tool's own process group */
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	for (i = 0; i < 2; i++)
		if (cap[i].fd >= 0)
			close(cap[i].fd);

	if (timed_out) {
		snprintf(out->error, sizeof(out->error),
			 "%s: no answer within %g s (killed by %s)", base, timeout_s,
			 tk_tool_name());
	} else if (!reaped) {
		snprintf(out->error, sizeof(out->error), "%s: interrupted", base);
	} else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		out->ok = true;
		err = tk_tool_check_parse(cap[0].buf ? cap[0].buf : "", out);
	} else {
		last_line(cap[1].buf ? cap[1].buf : "", out->error, sizeof(out->error));
		if (!out->error[0] && WIFSIGNALED(status))
			snprintf(out->error, sizeof(out->error), "%s: killed by signal %d (%s)",
				 base, WTERMSIG(status), strsignal(WTERMSIG(status)));
		else if (!out->error[0])
			snprintf(out->error, sizeof(out->error), "%s: exited with status %d and no message",
				 base, WEXITSTATUS(status));
	}
	free(cap[0].buf);
	free(cap[1].buf);
	return err;
}
