/* tcpconnect: trace active TCP connects (IPv4 and IPv6), or count them. */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns.h"
#include "kfunc_or_tp.h"
#include "tcpconnect.h"
#include "tcpconnect.skel.h"
#include "tracekit.h"

static struct {
	bool count;
	bool lport;     /* -L (bcc) or -s (libbpf-tools): local port column */
	bool dns;
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
	{ "source-port", 's', 0, 0,
	  "With -c, count per local (source) port too; else as -L", 0 },
	{ "lport", 'L', 0, 0, "Print a LPORT column (the local port)", 0 },
	{ "dns", 'd', 0, 0,
	  "Print the likely DNS query behind each connect (QUERY column)", 0 },
	{ "ipv4", '4', 0, 0, "Only IPv4", 0 },
	{ "ipv6", '6', 0, 0, "Only IPv6", 0 },
	{ "print-uid", 'U', 0, 0, "Print a UID column", 0 },
	{ "timestamp", 't', 0, 0, "Print seconds since start (TIME(s))", 0 },
	{ 0 },
};

static const char doc[] =
"Trace active TCP connects, IPv4 and IPv6.\n"
"\v"
"A connect is reported once the kernel has made its SYN: that includes\n"
"non-blocking connects still in progress (EINPROGRESS) and connects the\n"
"peer then refuses or that time out, as in bcc; a connect that fails\n"
"before (no route, no free local port) is not. An IPv6 socket connecting\n"
"to a v4-mapped address (::ffff:a.b.c.d) is reported as IPv4 (with -6,\n"
"as IPv6). -L adds the local port (LPORT); -j always has it (\"sport\").\n"
"\n"
"It traces the tracepoint sock:inet_sock_set_state where the kernel has\n"
"it (4.16), else the kernel functions tcp_v4_connect and tcp_v6_connect\n"
"(fentry, else kprobes); -v says which. The tracepoint sees the change\n"
"to SYN_SENT in the connecting task, just before the kernel picks the\n"
"local port: the connect is printed at the socket's next change\n"
"(ESTABLISHED, or CLOSE when refused, timed out or closed), usually\n"
"within a round trip; one to a host that does not answer, when it is\n"
"given up. The kernel functions print it when tcp_v[46]_connect returns.\n"
"\n"
"--print-cgroup adds CGROUP, the connecting task's cgroup v2 path, after\n"
"COMM; with -c, connects are counted per cgroup too, CGROUP first.\n"
"\n"
"-d watches DNS replies (UDP from port 53) as they arrive, on the\n"
"tracepoint net:netif_receive_skb, and keeps the name each reply's\n"
"question resolved to its A and AAAA addresses (following CNAMEs), for\n"
"24 hours, at most 10240 addresses, as bcc does. A connect's QUERY is the\n"
"name last resolved to its destination, with \"(N ms)\" when that reply\n"
"came more than 100 ms before; \"localhost\" for 127.0.0.1 and ::1, else\n"
"\"No DNS Query\". It reads a reply's UDP payload, at most 1232 bytes,\n"
"from the packet's linear data, where loopback puts it (a driver that\n"
"leaves payloads in page fragments hides them); replies it cannot read\n"
"are counted at exit. DNS over TCP or TLS is not seen. In -j, \"query\"\n"
"is the name or null, and \"query_age_ms\" its age.\n"
"--cgroup and --duration have no short letters here: -c is --count and\n"
"-d is --dns, as in bcc.\n"
"\n"
"Examples:\n"
"  tcpconnect             # trace all TCP connects\n"
"  tcpconnect -t -U       # with TIME(s) and UID columns\n"
"  tcpconnect -d          # with the DNS query behind each connect\n"
"  tcpconnect -L          # with the local port (LPORT)\n"
"  tcpconnect -p 181      # only process 181\n"
"  tcpconnect -P 80,443   # only destination ports 80 and 443\n"
"  tcpconnect -4          # only IPv4\n"
"  tcpconnect -u 1000     # only UID 1000\n"
"  tcpconnect -c --duration 60  # count connects per tuple for a minute\n"
"  tcpconnect -c -s       # count per local port too\n"
"  tcpconnect --print-cgroup  # with the connecting task's cgroup\n"
"  tcpconnect --cgroup /sys/fs/cgroup/system.slice  # only this cgroup\n"
"  tcpconnect -j          # NDJSON, one object per connect\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'c': env.count = true; break;
	case 's': /* fall through: one column, two spellings */
	case 'L': env.lport = true; break;
	case 'd': env.dns = true; break;
	case 'P':
		env.n_ports = tk_ports_arg("--port", arg, env.ports, TCPCONNECT_MAX_PORTS);
		break;
	case '4': env.ipv4_only = true; break;
	case '6': env.ipv6_only = true; break;
	case 'U': env.print_uid = true; break;
	case 't': env.timestamp = true; break;
	case ARGP_KEY_END:
		if (env.ipv4_only && env.ipv6_only)
			tk_usage_error("--ipv4 and --ipv6 exclude each other; give neither for both");
		if (env.count && (env.print_uid || env.timestamp || tk_opts.time))
			tk_usage_error("--count prints one table at exit: it cannot be combined with --print-uid, --timestamp or --time");
		if (env.count && env.dns)
			tk_usage_error("--dns names the destination of each connect: it cannot be combined with --count");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* libbpf-tools' short letters for bcc's --cgroupmap and --mntnsmap. */
static const struct tk_bcc_missing bcc_missing[] = {
	{ "-C", "libbpf-tools' --cgroupmap: filter by cgroup directory with --cgroup PATH (cgroup v2)" },
	{ "-M", "libbpf-tools' --mntnsmap: there is no mount-namespace map; filter with --cgroup PATH or -p PID" },
	{ 0 },
};

static const struct tk_tool tool = {
	.name = "tcpconnect",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "cd",
	.bcc_missing = bcc_missing,
};

/* bcc's columns: "%-7d %-12.12s %-2d %-16s [%-6d] %-16s %-6d [%s]"
 * (LPORT with -L, QUERY with -d), after "%-9.3f" TIME(s) and "%-6d" UID;
 * here each column keeps a blank after it even when a value is wider.
 * --print-cgroup's CGROUP (not in bcc) goes with the task's columns,
 * after COMM; in -c's table, which has none, it is first. */
static const struct tk_col c_pid = { "PID", 7, 1 }, c_comm = { "COMM", 12, 1 },
	c_cgroup = { TK_CGROUP_HEADER, TK_CGROUP_WIDTH, 1 },
	c_ip = { "IP", 2, 1 }, c_saddr = { "SADDR", 16, 1 },
	c_lport = { "LPORT", 6, 1 }, c_daddr = { "DADDR", 16, 1 },
	c_dport = { "DPORT", 6, 1 }, c_query = { "QUERY", 5, 1 };

/* -d: the names DNS replies gave to addresses, and how many replies came. */
#define DNS_CACHE_MAX 10240                        /* bcc's DNS_CACHE_SIZE */
#define DNS_TTL_NS (24ULL * 3600 * 1000000000ULL)  /* bcc's DEFAULT_TTL */
#define DNS_LATE_NS (100 * 1000000ULL)             /* bcc's DELAY_DNS */
static struct tk_dns_cache *dns_cache;
static unsigned long long dns_replies, dns_unread;

/* The columns this run prints, in bcc's order. */
static void print_header(void)
{
	const struct tk_col *cols[9];
	int n = 0, i;

	cols[n++] = &c_pid;
	cols[n++] = &c_comm;
	if (tk_opts.filter.cgroup_ids)
		cols[n++] = &c_cgroup;
	cols[n++] = &c_ip;
	cols[n++] = &c_saddr;
	if (env.lport)
		cols[n++] = &c_lport;
	cols[n++] = &c_daddr;
	cols[n++] = &c_dport;
	if (env.dns)
		cols[n++] = &c_query;
	if (tk_opts.time)
		printf("%-8s ", "TIME");
	if (env.timestamp)
		printf("%-8s ", "TIME(s)");
	if (env.print_uid)
		printf("%-5s ", "UID");
	for (i = 0; i < n; i++)
		tk_print_cell(stdout, cols[i], i == n - 1, "%s", cols[i]->name);
	putchar('\n');
}

struct query {
	const char *name;         /* from a DNS reply, or NULL */
	unsigned long long age;   /* ns from that reply to the connect */
};

static struct query dns_query(const struct tcpconnect_event *e)
{
	struct query q = { 0 };
	uint64_t ts;

	q.name = tk_dns_cache_get(dns_cache, e->ip == 4 ? AF_INET : AF_INET6,
				  e->daddr, e->ts, &ts);
	if (q.name)
		q.age = e->ts > ts ? e->ts - ts : 0;
	return q;
}

/* bcc's QUERY: the name, with its age when the reply was not recent;
 * localhost for the loopback addresses; else "No DNS Query". */
static void print_query(const struct tcpconnect_event *e, const char *daddr)
{
	struct query q = dns_query(e);

	if (!q.name) {
		fputs(!strcmp(daddr, "127.0.0.1") || !strcmp(daddr, "::1") ?
		      "localhost" : "No DNS Query", stdout);
		return;
	}
	tk_print_safe(stdout, q.name, strlen(q.name));
	if (q.age > DNS_LATE_NS)
		printf(" (%.3fms)", q.age / 1e6);
}

static void print_text(const struct tcpconnect_event *e)
{
	char buf[INET6_ADDRSTRLEN], daddr[INET6_ADDRSTRLEN];
	size_t comm_len = strnlen(e->comm, sizeof(e->comm));

	tk_addr_str(e->ip, e->daddr, daddr, sizeof(daddr));
	if (tk_opts.time)
		printf("%-8s ", tk_time_str(buf, sizeof(buf)));
	if (env.timestamp)
		printf("%-8.3f ", tk_elapsed());
	if (env.print_uid)
		printf("%-5u ", e->uid);
	tk_print_cell(stdout, &c_pid, 0, "%d", e->pid);
	tk_print_safe_padded(stdout, e->comm, comm_len < 12 ? comm_len : 12,
			     c_comm.width);
	putchar(' ');
	if (tk_opts.filter.cgroup_ids)
		tk_print_cgroup(stdout, e->cgroup_id, c_cgroup.width);
	tk_print_cell(stdout, &c_ip, 0, "%d", e->ip);
	tk_print_cell(stdout, &c_saddr, 0, "%s", tk_addr_str(e->ip, e->saddr, buf, sizeof(buf)));
	if (env.lport)
		tk_print_cell(stdout, &c_lport, 0, "%u", e->sport);
	tk_print_cell(stdout, &c_daddr, 0, "%s", daddr);
	tk_print_cell(stdout, &c_dport, !env.dns, "%u", e->dport);
	if (env.dns)
		print_query(e, daddr);
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
	if (tk_opts.filter.cgroup_ids)
		tk_json_cgroup(&j, e->cgroup_id);
	tk_json_int(&j, "ip", e->ip);
	tk_json_str(&j, "saddr", tk_addr_str(e->ip, e->saddr, buf, sizeof(buf)));
	tk_json_uint(&j, "sport", e->sport);
	tk_json_str(&j, "daddr", tk_addr_str(e->ip, e->daddr, buf, sizeof(buf)));
	tk_json_uint(&j, "dport", e->dport);
	if (env.dns) {
		struct query q = dns_query(e);

		if (q.name) {
			tk_json_str(&j, "query", q.name);
			tk_json_double(&j, "query_age_ms", q.age / 1e6);
		} else {
			tk_json_null(&j, "query");
		}
	}
	tk_json_end(&j);
}

static void remember(const char *qname, int family, const void *addr, void *ts)
{
	if (tk_dns_cache_put(dns_cache, family, addr, qname,
			     *(unsigned long long *)ts))
		tk_fail("out of memory");
}

static void handle_dns(const struct tcpconnect_dns *d)
{
	unsigned long long ts = d->ts;

	dns_replies++;
	if (d->len > sizeof(d->pkt) ||
	    tk_dns_parse_reply(d->pkt, d->len, remember, &ts) < 0)
		dns_unread++;
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct tcpconnect_event *e = data;
	unsigned int kind;

	(void)ctx;
	if (size < sizeof(kind))
		return 0;
	memcpy(&kind, data, sizeof(kind));
	if (kind == TCPCONNECT_DNS && size >= sizeof(struct tcpconnect_dns)) {
		handle_dns(data);
		return 0;
	}
	if (kind != TCPCONNECT_CONNECT || size < sizeof(*e) ||
	    (e->ip != 4 && e->ip != 6))
		return 0;  /* malformed */
	if (tk_opts.json)
		print_json(e);
	else
		print_text(e);
	return 0;
}

/* -d: what could not be read is said, like a loss. */
static void dns_report(void)
{
	struct tk_json j;

	if (tk_opts.json) {
		tk_json_begin(&j, stdout);
		tk_json_str(&j, "type", "dns");
		tk_json_uint(&j, "replies", dns_replies);
		tk_json_uint(&j, "unreadable", dns_unread);
		tk_json_end(&j);
	} else if (dns_unread) {
		fflush(stdout);
		fprintf(stderr, "tcpconnect: %llu of %llu DNS replies could not be read (cut short, or not DNS)\n",
			dns_unread, dns_replies);
	}
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
	/* bcc's "%-25s %-25s %-20s %-10s"; -s: libbpf-tools' LPORT
	 * "%-20s" before RPORT */
	const struct tk_col laddr = { "LADDR", 25, 1 }, raddr = { "RADDR", 25, 1 },
		lport = { "LPORT", 20, 1 }, rport = { "RPORT", 20, 1 },
		connects = { "CONNECTS", 8, 1 };
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
	if (!tk_opts.json) {
		if (tk_opts.filter.cgroup_ids)
			tk_print_cell(stdout, &c_cgroup, 0, "%s", c_cgroup.name);
		tk_print_cell(stdout, &laddr, 0, "%s", laddr.name);
		tk_print_cell(stdout, &raddr, 0, "%s", raddr.name);
		if (env.lport)
			tk_print_cell(stdout, &lport, 0, "%s", lport.name);
		tk_print_cell(stdout, &rport, 0, "%s", rport.name);
		tk_print_cell(stdout, &connects, 1, "%s", connects.name);
		putchar('\n');
	}
	for (i = 0; i < n; i++) {
		const struct tuple *t = &rows[i];

		if (tk_opts.json) {
			tk_json_begin(&j, stdout);
			tk_json_str(&j, "type", "connect_count");
			if (tk_opts.filter.cgroup_ids)
				tk_json_cgroup(&j, t->k.cgroup_id);
			tk_json_int(&j, "ip", t->k.ip);
			tk_json_str(&j, "saddr", tk_addr_str(t->k.ip, t->k.saddr, buf, sizeof(buf)));
			if (env.lport)
				tk_json_uint(&j, "sport", t->k.sport);
			tk_json_str(&j, "daddr", tk_addr_str(t->k.ip, t->k.daddr, buf, sizeof(buf)));
			tk_json_uint(&j, "dport", t->k.dport);
			tk_json_uint(&j, "count", t->n);
			tk_json_end(&j);
			continue;
		}
		if (tk_opts.filter.cgroup_ids)
			tk_print_cgroup(stdout, t->k.cgroup_id, c_cgroup.width);
		tk_print_cell(stdout, &laddr, 0, "%s", tk_addr_str(t->k.ip, t->k.saddr, buf, sizeof(buf)));
		tk_print_cell(stdout, &raddr, 0, "%s", tk_addr_str(t->k.ip, t->k.daddr, buf, sizeof(buf)));
		if (env.lport)
			tk_print_cell(stdout, &lport, 0, "%u", t->k.sport);
		tk_print_cell(stdout, &rport, 0, "%u", t->k.dport);
		tk_print_cell(stdout, &connects, 1, "%llu", t->n);
		putchar('\n');
	}
	fflush(stdout);
	free(rows);
}

static enum tk_way way;  /* set by tk_load_tp_or_kfunc before each attempt */

static int configure(void *s, void *ctx)
{
	struct tcpconnect_bpf *skel = s;
	int i;

	(void)ctx;
	skel->rodata->count_mode = env.count;
	skel->rodata->count_sport = env.count && env.lport;
	skel->rodata->n_ports = env.n_ports;
	for (i = 0; i < env.n_ports; i++)
		skel->rodata->ports[i] = env.ports[i];
	skel->rodata->tk_sock_ip = env.ipv4_only ? 4 : env.ipv6_only ? 6 : 0;
	if (env.ipv4_only)
		tk_programs_off(skel->obj, "kf_v6_");
	if (env.ipv6_only)
		tk_programs_off(skel->obj, "kf_v4_");
	if (!env.dns)
		tk_programs_off(skel->obj, "dns_reply_");
	/* Only the map this mode writes; the other's code is dead. */
	bpf_map__set_autocreate(skel->maps.counts, env.count);
	bpf_map__set_autocreate(skel->maps.sockets, way == TK_WAY_KFUNC);
	bpf_map__set_autocreate(skel->maps.pending, way == TK_WAY_TP);
	bpf_map__set_autocreate(skel->maps.tk_events, !env.count);
	return 0;
}

TK_SKEL_OPS(tcpconnect_bpf);

/* What the tracepoint way cannot see, for -v. */
static const char *tp_blind =
	"the local port before the connect's next state change (the connect is printed then)";

int main(int argc, char **argv)
{
	struct tcpconnect_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	if (!env.count)
		tk_events_default_kb(256);  /* connects are few and small */
	if (env.dns && !(dns_cache = tk_dns_cache_new(DNS_CACHE_MAX, DNS_TTL_NS)))
		tk_fail("out of memory");
	if (env.dns)
		tk_info("-d sees DNS replies over UDP from port 53 whose payload is in the packet's linear data; not DNS over TCP or TLS");
	skel = tk_load_tp_or_kfunc(&tcpconnect_bpf_ops, configure, NULL, &way, tp_blind);
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
		if (env.dns)
			dns_report();
	}
	tk_losses_report(skel->obj);
	tcpconnect_bpf__destroy(skel);
	tk_dns_cache_free(dns_cache);
	return tk_exit_status();
}
