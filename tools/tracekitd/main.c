/* tracekitd: the daemon's lifecycle. Read the config, listen, start the
 * enabled collectors (one that cannot start on this kernel is logged and
 * exported as down, unless --strict), drop the capabilities it no longer
 * needs, tell systemd it is ready, then drain events and answer the
 * watchdog until SIGTERM; SIGHUP reloads the config. */
#include "tracekitd.h"

#include <argp.h>
#include <stdarg.h>
#include <stdio.h>
#include <cap-ng.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "tracekit.h"
#include "version.h"
#include "webconfig.h"

const struct collector *const collectors[N_COLLECTORS] = {
	[COLLECT_SYSCALLS] = &collector_syscalls,
	[COLLECT_EXECS] = &collector_execs,
	[COLLECT_RUNQLAT] = &collector_runqlat,
	[COLLECT_TCPCONNECT] = &collector_tcpconnect,
	[COLLECT_VFSSTAT] = &collector_vfsstat,
	[COLLECT_BLOCK] = &collector_block,
	[COLLECT_FS] = &collector_fs,
	[COLLECT_TCPSTATES] = &collector_tcpstates,
	[COLLECT_NETDEV] = &collector_netdev,
	[COLLECT_DROPS] = &collector_drops,
	[COLLECT_RETRANS] = &collector_retrans,
	[COLLECT_HARDIRQS] = &collector_hardirqs,
	[COLLECT_SOFTIRQS] = &collector_softirqs,
	[COLLECT_CPUDIST] = &collector_cpudist,
	[COLLECT_RUNQLEN] = &collector_runqlen,
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct config config;
static bool running[N_COLLECTORS];
/* Set once drop_capabilities() has given up the start-up privileges. */
static bool privileges_dropped;

static struct {
	const char *config_path;
	bool config_given, check_config, strict;
	const char *listen, *web_config;
	unsigned long max_series;
	int verbose;
} args = { .config_path = TRACEKITD_DEFAULT_CONFIG };

void state_lock(void)
{
	pthread_mutex_lock(&lock);
}

void state_unlock(void)
{
	pthread_mutex_unlock(&lock);
}

const struct config *current_config(void)
{
	return &config;
}

enum { OPT_CHECK = 256, OPT_LISTEN, OPT_STRICT, OPT_MAX_SERIES, OPT_WEB_CONFIG };

static const struct argp_option options[] = {
	{ "config", 'C', "FILE", 0, "Configuration file (default " TRACEKITD_DEFAULT_CONFIG ")", 0 },
	{ "listen", OPT_LISTEN, "ADDR:PORT", 0, "Serve /metrics here (default " TRACEKITD_DEFAULT_LISTEN "; [::1]:PORT for IPv6)", 0 },
	{ "web-config", OPT_WEB_CONFIG, "FILE", 0, "TLS and basic auth for /metrics: a web config file in the Prometheus exporters' format (tls_server_config, basic_auth_users); read again on SIGHUP", 0 },
	{ "max-series", OPT_MAX_SERIES, "N", 0, "Series kept per labelled metric; the rest are summed into one " TRACEKITD_OVERFLOW_LABEL " series (default 1000)", 0 },
	{ "strict", OPT_STRICT, NULL, 0, "Exit 1 when an enabled collector cannot start, instead of running without it", 0 },
	{ "check-config", OPT_CHECK, NULL, 0, "Validate the configuration and exit (0 when valid)", 0 },
	{ "verbose", 'v', NULL, 0, "libbpf messages and each probe's attach method", 0 },
	{ 0 },
};

static error_t parse(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'C':
		args.config_path = arg;
		args.config_given = true;
		break;
	case OPT_LISTEN:
		args.listen = arg;
		break;
	case OPT_WEB_CONFIG:
		args.web_config = arg;
		break;
	case OPT_MAX_SERIES:
		args.max_series = tk_arg_long("--max-series", arg, 1, 1000000);
		break;
	case OPT_STRICT:
		args.strict = true;
		break;
	case OPT_CHECK:
		args.check_config = true;
		break;
	case 'v':
		args.verbose++;
		break;
	case ARGP_KEY_ARG:
		tk_usage_error("unexpected argument '%s'", arg);
	default:
		(void)state;
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const char doc[] =
	"Always-on BPF counters for Prometheus, served at http://" TRACEKITD_DEFAULT_LISTEN
	"/metrics: syscalls, execs, run queue latency, TCP connects, VFS calls, block I/O, "
	"file system operation latency, TCP state changes and retransmits, network "
	"device packets and packet drops, interrupt time, on-CPU time and run queue length.\v"
	"The configuration is an INI file:\n\n"
	"  [tracekitd]\n  listen = 127.0.0.1:9949\n  max_series = 1000\n  strict = no\n"
	"  web_config = /etc/tracekit/web.yml\n\n"
	"  [collectors]\n  syscalls = yes\n  execs = yes\n  runqlat = yes\n"
	"  tcpconnect = yes\n  vfsstat = yes\n  block = no\n  fs = no\n"
	"  fs_types = ext4 xfs\n  tcpstates = yes\n  netdev = no\n  drops = yes\n  retrans = yes\n"
	"  hardirqs = yes\n  softirqs = yes\n  cpudist = no\n  runqlen = yes\n\n"
	"fs_types: the fs collector's file systems (default: ext4 xfs btrfs nfs, "
	"those the kernel has).\n"
	"web_config (or --web-config): the web config of the Prometheus exporters "
	"(node_exporter's --web.config.file), in YAML:\n\n"
	"  tls_server_config:\n    cert_file: /etc/tracekit/tls.crt\n"
	"    key_file: /etc/tracekit/tls.key\n"
	"    client_ca_file: /etc/tracekit/clients-ca.crt   # optional\n"
	"    client_auth_type: RequireAndVerifyClientCert\n    min_version: TLS12\n"
	"  basic_auth_users:\n    prometheus: $2y$10$...   # htpasswd -nBC 10 prometheus\n\n"
	"Without credentials a request gets 401 and no metric. SIGHUP reads the web "
	"config and its certificates again.\n"
	"Options override the file. SIGHUP reloads it; SIGTERM detaches everything "
	"and exits 0.";

/* The file, then the command line over it, then the web config it names
 * (into *web). Returns 0 or -1 (err set). */
static int read_config(struct config *c, struct web_config *web, char *err, size_t errlen)
{
	struct sockaddr_storage ss;

	memset(web, 0, sizeof(*web));
	if (config_load(c, args.config_path, args.config_given, err, errlen))
		return -1;
	if (args.web_config) {
		if (strlen(args.web_config) >= sizeof(c->web_config)) {
			snprintf(err, errlen, "--web-config: file name too long");
			return -1;
		}
		strcpy(c->web_config, args.web_config);
	}
	if (args.listen) {
		if (config_parse_listen(args.listen, &ss, err, errlen))
			return -1;
		snprintf(c->listen, sizeof(c->listen), "%s", args.listen);
	}
	if (args.max_series)
		c->max_series = args.max_series;
	if (args.strict)
		c->strict = true;
	if (c->web_config[0])
		return webconfig_load(c->web_config, web, err, errlen);
	return 0;
}

static void notify(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static void notify(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sd_notify(0, msg);
}

static void stop_collector(int i)
{
	collectors[i]->stop();
	health_stopped(i);
	running[i] = false;
}

static void stop_all(void)
{
	int i;

	for (i = 0; i < N_COLLECTORS; i++)
		if (running[i])
			stop_collector(i);
}

/* Start collector i; a failure is logged and kept for the metrics. Under
 * --strict it ends the daemon. */
static void start_collector(int i)
{
	char err[512] = "";

	if (collectors[i]->start(&config, err, sizeof(err))) {
		/* A collector a reload enables attaches with the privileges
		 * left: some kernels want more (Debian's and Ubuntu's, at
		 * kernel.perf_event_paranoid 3, allow perf_event_open, and so
		 * tracepoints, kprobes and samplers, to CAP_SYS_ADMIN only). */
		bool refused = strstr(err, strerror(EPERM)) || strstr(err, strerror(EACCES));

		tk_warn("collector %s: %s%s", collectors[i]->name, err,
			privileges_dropped && refused ?
			"; tracekitd gave up its start-up privileges once attached: "
			"restart it (systemctl restart tracekitd) to start this collector" : "");
		health_failed(i, err);
		if (config.strict) {
			stop_all();
			tk_fail("collector %s could not start, and strict is set",
				collectors[i]->name);
		}
		return;
	}
	running[i] = true;
	health_record(i, collectors[i]->object());
	tk_info("collector %s: started", collectors[i]->name);
}

static int count_running(char *names, size_t size)
{
	int i, n = 0;
	size_t used = 0;

	names[0] = 0;
	for (i = 0; i < N_COLLECTORS; i++)
		if (running[i]) {
			used += snprintf(names + used, size - used, "%s%s",
					 n++ ? " " : "", collectors[i]->name);
			if (used >= size)
				used = size - 1;
		}
	return n;
}

static bool kernel_has_cap_bpf(void)
{
	return tk_read_sysctl("/proc/sys/kernel/cap_last_cap", 0) >= 39;  /* CAP_BPF, Linux 5.8 */
}

/* After attaching: keep only what reading maps and attaching BPF
 * programs again on reload need: CAP_BPF and CAP_PERFMON (5.8+), else
 * CAP_SYS_ADMIN, which older kernels ask for both. A kernel may want
 * more for perf events (start_collector says so). Every other capability
 * goes, bounding set included, so nothing this process does later can
 * regain them. */
static void drop_capabilities(void)
{
	const unsigned what = CAPNG_EFFECTIVE | CAPNG_PERMITTED | CAPNG_BOUNDING_SET;
	bool cap_bpf = kernel_has_cap_bpf();
	int rc;

	capng_clear(CAPNG_SELECT_BOTH);
	if (cap_bpf)
		capng_updatev(CAPNG_ADD, what, 39 /* CAP_BPF */,
			      38 /* CAP_PERFMON */, -1);
	else
		capng_update(CAPNG_ADD, what, CAP_SYS_ADMIN);
	rc = capng_apply(CAPNG_SELECT_BOTH);
	privileges_dropped = !rc;
	if (rc)
		tk_warn("cannot drop capabilities (capng_apply: %d); keeping them", rc);
	else
		tk_info("capabilities kept: %s", cap_bpf ? "cap_bpf cap_perfmon" :
			"cap_sys_admin");
}

/* next_web: the web config next names, which this takes over. */
static void apply_config(const struct config *next, struct web_config *next_web)
{
	char err[512];
	bool listen_changed = strcmp(next->listen, config.listen) != 0;
	/* A web config is read again on every reload: renewed certificates. */
	bool web = next->web_config[0] || config.web_config[0];
	bool cap_changed = next->max_series != config.max_series;
	struct config old = config;
	int i;

	if (listen_changed || web) {
		if (http_restart(next->listen, next_web, err, sizeof(err))) {
			tk_warn("reload: %s; still listening on %s as before", err, old.listen);
			return;
		}
	} else {
		webconfig_free(next_web);
	}
	state_lock();
	config = *next;
	for (i = 0; i < N_COLLECTORS; i++) {
		/* execs keeps its comm table: a new cap needs a new one. */
		if (running[i] && (!config.enabled[i] ||
				   (cap_changed && i == COLLECT_EXECS)))
			stop_collector(i);
		if (config.enabled[i] && !running[i])
			start_collector(i);
		if (!config.enabled[i])
			health_stopped(i);
	}
	state_unlock();
}

static void reload(void)
{
	struct config next;
	struct web_config web;
	char err[512], names[256];
	int n;

	notify("RELOADING=1");
	if (read_config(&next, &web, err, sizeof(err))) {
		tk_warn("reload: %s; keeping the running configuration", err);
	} else {
		apply_config(&next, &web);
		tk_notice("reloaded %s", args.config_path);
	}
	n = count_running(names, sizeof(names));
	notify("READY=1\nSTATUS=%d collector%s running (%s), serving %s://%s/metrics",
	       n, n == 1 ? "" : "s", names, http_scheme(), config.listen);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void main_loop(void)
{
	uint64_t wd_usec = 0;
	double next_ping = 0;
	int i, timeout = 1000;

	if (sd_watchdog_enabled(0, &wd_usec) > 0 && wd_usec) {
		timeout = wd_usec / 2000 < 1000 ? (int)(wd_usec / 2000) : 1000;
		if (timeout < 1)
			timeout = 1;
	}
	while (!tk_exiting()) {
		struct pollfd pfd = { .fd = tk_events_fd(), .events = POLLIN };

		/* Wait without the lock; drain with it, as a scrape does. */
		poll(&pfd, pfd.fd >= 0, timeout);
		state_lock();
		for (i = 0; i < N_COLLECTORS; i++)
			if (running[i] && collectors[i]->poll)
				collectors[i]->poll();
		state_unlock();
		if (tk_reload_requested())
			reload();
		if (wd_usec && now_s() >= next_ping) {
			sd_notify(0, "WATCHDOG=1");
			next_ping = now_s() + wd_usec / 2e6;
		}
	}
}

int main(int argc, char **argv)
{
	static const struct argp argp = { options, parse, NULL, doc, NULL, NULL, NULL };
	char err[512], names[256];
	struct web_config web;
	int i, n;

	tk_set_tool_name("tracekitd");
	argp_program_version_hook = tk_version_hook;
	if (argp_parse(&argp, argc, argv, ARGP_IN_ORDER, NULL, NULL))
		tk_usage_error("bad arguments");
	if (read_config(&config, &web, err, sizeof(err)))
		tk_fail("%s", err);
	if (args.check_config) {
		printf("%s: %s (listen %s, max_series %lu, collectors:", args.config_path,
		       access(args.config_path, F_OK) ? "not found, defaults valid" : "valid",
		       config.listen, config.max_series);
		for (i = 0; i < N_COLLECTORS; i++)
			if (config.enabled[i])
				printf(" %s", collectors[i]->name);
		printf(")");
		if (config.web_config[0])
			printf(", web_config %s (%s, %zu basic auth user%s)", config.web_config,
			       web.tls ? "TLS" : "no TLS", web.n_users, web.n_users == 1 ? "" : "s");
		printf("\n");
		webconfig_free(&web);
		return 0;
	}
	tk_opts.verbose = args.verbose;
	tk_init();  /* SIGTERM and SIGINT end the main loop */
	tk_catch_reload();
	if (http_start(config.listen, &web, err, sizeof(err)))
		tk_fail("%s", err);
	state_lock();
	for (i = 0; i < N_COLLECTORS; i++)
		if (config.enabled[i])
			start_collector(i);
	state_unlock();
	drop_capabilities();
	n = count_running(names, sizeof(names));
	tk_notice("%d collector%s running (%s); metrics at %s://%s/metrics", n,
		n == 1 ? "" : "s", names, http_scheme(), config.listen);
	notify("READY=1\nSTATUS=%d collector%s running (%s), serving %s://%s/metrics",
	       n, n == 1 ? "" : "s", names, http_scheme(), config.listen);
	tk_ready();
	main_loop();
	notify("STOPPING=1");
	http_stop();
	state_lock();
	stop_all();
	tk_detach();
	state_unlock();
	tk_notice("stopped; all probes detached");
	return 0;
}
