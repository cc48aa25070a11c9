/* tcpconnect: trace active TCP connects (IPv4 and IPv6), or count them. */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tcpconnect.h"
#include "tcpconnect.skel.h"
#include "tracekit.h"

static struct {
	bool count;
	bool print_uid;
	bool timestamp;
	bool ipv4_only, ipv6_only;
	int n_ports;
	unsigned short ports[TCPCONNECT_MAX_PORTS];
} env;

static const struct argp_option options[] = {
	{ "count", 'c', 0, 0,
	  "Count connects per source address, destination address and port; print at exit", 0 },
	{ "port", 'P', "PORTS", 0,
	  "Only these destination ports (comma-separated, at most 64)", 0 },
	{ "ipv4", '4', 0, 0, "Only IPv4 (tcp_v4_connect)", 0 },
	{ "ipv6", '6', 0, 0, "Only IPv6 (tcp_v6_connect)", 0 },
	{ "print-uid", 'U', 0, 0, "Print a UID column", 0 },
	{ "timestamp", 't', 0, 0, "Print seconds since start (TIME(s))", 0 },
	{ 0 },
};

static const char doc[] =
"Trace active TCP connects, IPv4 and IPv6.\n"
"\v"
"A connect is reported when the kernel sent its SYN (tcp_v4_connect or\n"
"tcp_v6_connect returned 0): that includes non-blocking connects still in\n"
"progress (EINPROGRESS) and connects the peer then refuses or that time\n"
"out, as in bcc; a connect that fails before its SYN (no route, no free\n"
"local port) is not. An IPv6 socket connecting to a v4-mapped address\n"
"(::ffff:a.b.c.d) is reported as IPv4. SPORT is the local port.\n"
"--cgroup has no short letter here: -c is --count, as in bcc.\n"
"\n"
"Examples:\n"
"  tcpconnect             # trace all TCP connects\n"
"  tcpconnect -t -U       # with TIME(s) and UID columns\n"
"  tcpconnect -p 181      # only process 181\n"
"  tcpconnect -P 80,443   # only destination ports 80 and 443\n"
"  tcpconnect -4          # only IPv4\n"
"  tcpconnect -u 1000     # only UID 1000\n"
"  tcpconnect -c -d 60    # count connects per tuple for a minute\n"
"  tcpconnect --cgroup /sys/fs/cgroup/system.slice  # only this cgroup\n"
"  tcpconnect -j          # NDJSON, one object per connect\n";

/* -P 80,443: every item a port, no empty ones. */
static void parse_ports(const char *arg)
{
	const char *p = arg;
	char *end = (char *)arg;
	long port;

	env.n_ports = 0;
	do {
		if (*p < '0' || *p > '9')  /* no sign, blank or empty item */
			port = 0;
		else
			port = strtol(p, &end, 10);
		if (port < 1 || port > 65535 || (*end && *end != ','))
			tk_usage_error("invalid --port value '%s': expected ports from 1 to 65535, comma-separated (e.g. 80,443)",
				       arg);
		if (env.n_ports == TCPCONNECT_MAX_PORTS)
			tk_usage_error("invalid --port value '%s': at most %d ports",
				       arg, TCPCONNECT_MAX_PORTS);
		env.ports[env.n_ports++] = port;
		p = end + 1;
	} while (*end);
}

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'c': env.count = true; break;
	case 'P': parse_ports(arg); break;
	case '4': env.ipv4_only = true; break;
	case '6': env.ipv6_only = true; break;
	case 'U': env.print_uid = true; break;
	case 't': env.timestamp = true; break;
	case ARGP_KEY_END:
		if (env.ipv4_only && env.ipv6_only)
			tk_usage_error("--ipv4 and --ipv6 exclude each other; give neither for both");
		if (env.count && (env.print_uid || env.timestamp || tk_opts.time))
			tk_usage_error("--count prints one table at exit: it cannot be combined with --print-uid, --timestamp or --time");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "tcpconnect",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "c",
};

static const char *addr_str(int ip, const unsigned char *addr, char *buf,
			    size_t len)
{
	if (!inet_ntop(ip == 4 ? AF_INET : AF_INET6, addr, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

/* bcc's columns: "%-6d %-12.12s %-2d %-16s %-6d %-16s %d" (its -L). */
static const struct tk_col c_pid = { "PID", 6, 1 }, c_comm = { "COMM", 12, 1 },
	c_ip = { "IP", 2, 1 }, c_saddr = { "SADDR", 16, 1 },
	c_sport = { "SPORT", 6, 1 }, c_daddr = { "DADDR", 16, 1 },
	c_dport = { "DPORT", 5, 1 };

static void print_header(void)
{
	const struct tk_col cols[] = { c_pid, c_comm, c_ip, c_saddr, c_sport,
				       c_daddr, c_dport };

	if (tk_opts.time)
		printf("%-8s ", "TIME");
	if (env.timestamp)
		printf("%-8s ", "TIME(s)");
	if (env.print_uid)
		printf("%-6s ", "UID");
	tk_print_header(stdout, cols, sizeof(cols) / sizeof(cols[0]));
}

static void print_text(const struct tcpconnect_event *e)
{
	char buf[INET6_ADDRSTRLEN];
	size_t comm_len = strnlen(e->comm, sizeof(e->comm));

	if (tk_opts.time)
		printf("%-8s ", tk_time_str(buf, sizeof(buf)));
	if (env.timestamp)
		printf("%-8.3f ", tk_elapsed());
	if (env.print_uid)
		printf("%-6u ", e->uid);
	tk_print_cell(stdout, &c_pid, 0, "%d", e->pid);
	tk_print_safe_padded(stdout, e->comm, comm_len < 12 ? comm_len : 12,
			     c_comm.width);
	putchar(' ');
	tk_print_cell(stdout, &c_ip, 0, "%d", e->ip);
	tk_print_cell(stdout, &c_saddr, 0, "%s", addr_str(e->ip, e->saddr, buf, sizeof(buf)));
	tk_print_cell(stdout, &c_sport, 0, "%u", e->sport);
	tk_print_cell(stdout, &c_daddr, 0, "%s", addr_str(e->ip, e->daddr, buf, sizeof(buf)));
	tk_print_cell(stdout, &c_dport, 1, "%u", e->dport);
	putchar('\n');
}

static void print_json(const struct tcpconnect_event *e)
{
	char buf[INET6_ADDRSTRLEN];
	struct tk_json j;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "connect");
	tk_json_time(&j);
	tk_json_int(&j, "pid", e->pid);
	tk_json_int(&j, "tid", e->tid);
	tk_json_uint(&j, "uid", e->uid);
	tk_json_strn(&j, "comm", e->comm, strnlen(e->comm, sizeof(e->comm)));
	tk_json_int(&j, "ip", e->ip);
	tk_json_str(&j, "saddr", addr_str(e->ip, e->saddr, buf, sizeof(buf)));
	tk_json_uint(&j, "sport", e->sport);
	tk_json_str(&j, "daddr", addr_str(e->ip, e->daddr, buf, sizeof(buf)));
	tk_json_uint(&j, "dport", e->dport);
	tk_json_end(&j);
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct tcpconnect_event *e = data;

	(void)ctx;
	if (size < sizeof(*e) || (e->ip != 4 && e->ip != 6))
		return 0;  /* malformed */
	if (tk_opts.json)
		print_json(e);
	else
		print_text(e);
	return 0;
}

/* -c: one row per tuple, by count (then address family, addresses, port). */
struct tuple {
	struct tcpconnect_key k;
	unsigned long long n;
};

static int by_count(const void *a, const void *b)
{
	const struct tuple *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	if (x->k.ip != y->k.ip)
		return x->k.ip < y->k.ip ? -1 : 1;
	return memcmp(&x->k, &y->k, sizeof(x->k));
}

static void print_counts(struct bpf_map *map)
{
	const struct tk_col laddr = { "LADDR", 25, 1 }, raddr = { "RADDR", 25, 1 },
		rport = { "RPORT", 20, 1 }, connects = { "CONNECTS", 8, 1 };
	const struct tk_col cols[] = { laddr, raddr, rport, connects };
	size_t max = bpf_map__max_entries(map), n = 0, i;
	struct tuple *rows = calloc(max, sizeof(*rows));
	struct tcpconnect_key key, *prev = NULL;
	int fd = bpf_map__fd(map);
	char buf[INET6_ADDRSTRLEN];
	struct tk_json j;

	if (!rows)
		tk_fail("out of memory");
	while (n < max && !bpf_map_get_next_key(fd, prev, &key)) {
		rows[n].k = key;
		prev = &rows[n].k;
		if (!bpf_map_lookup_elem(fd, &key, &rows[n].n))
			n++;
	}
	qsort(rows, n, sizeof(*rows), by_count);
	if (!tk_opts.json)
		tk_print_header(stdout, cols, 4);
	for (i = 0; i < n; i++) {
		const struct tuple *t = &rows[i];

		if (tk_opts.json) {
			tk_json_begin(&j, stdout);
			tk_json_str(&j, "type", "connect_count");
			tk_json_int(&j, "ip", t->k.ip);
			tk_json_str(&j, "saddr", addr_str(t->k.ip, t->k.saddr, buf, sizeof(buf)));
			tk_json_str(&j, "daddr", addr_str(t->k.ip, t->k.daddr, buf, sizeof(buf)));
			tk_json_uint(&j, "dport", t->k.dport);
			tk_json_uint(&j, "count", t->n);
			tk_json_end(&j);
			continue;
		}
		tk_print_cell(stdout, &laddr, 0, "%s", addr_str(t->k.ip, t->k.saddr, buf, sizeof(buf)));
		tk_print_cell(stdout, &raddr, 0, "%s", addr_str(t->k.ip, t->k.daddr, buf, sizeof(buf)));
		tk_print_cell(stdout, &rport, 0, "%u", t->k.dport);
		tk_print_cell(stdout, &connects, 1, "%llu", t->n);
		putchar('\n');
	}
	fflush(stdout);
	free(rows);
}

static int configure(void *s, void *ctx)
{
	struct tcpconnect_bpf *skel = s;
	int i;

	(void)ctx;
	skel->rodata->count_mode = env.count;
	skel->rodata->n_ports = env.n_ports;
	for (i = 0; i < env.n_ports; i++)
		skel->rodata->ports[i] = env.ports[i];
	if (env.ipv4_only)
		tk_programs_off(skel->obj, "v6_");
	if (env.ipv6_only)
		tk_programs_off(skel->obj, "v4_");
	/* Only the map this mode writes; the other's code is dead. */
	bpf_map__set_autocreate(skel->maps.counts, env.count);
	bpf_map__set_autocreate(skel->maps.tk_events, !env.count);
	return 0;
}

TK_SKEL_OPS(tcpconnect_bpf);

int main(int argc, char **argv)
{
	struct tcpconnect_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	if (!env.count)
		tk_events_default_kb(256);  /* connects are few and small */
	skel = tk_load(&tcpconnect_bpf_ops, configure, NULL);
	if (env.count) {
		tk_ready();
		while (!tk_exiting())
			tk_sleep_ms(1000);
		print_counts(skel->maps.counts);
	} else {
		tk_events_open(skel->obj, handle_event, NULL);
		if (!tk_opts.json)
			print_header();
		tk_ready();
		tk_events_loop();
	}
	tk_losses_report(skel->obj);
	tcpconnect_bpf__destroy(skel);
	return 0;
}
