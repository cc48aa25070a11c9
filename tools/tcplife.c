/* tcplife: trace TCP connections, one line each when it closes. */
#include <stdio.h>
#include <string.h>

#include "tcplife.h"
#include "tcplife.skel.h"
#include "tracekit.h"

static struct {
	bool timestamp;
	bool wide;
	struct tk_sock_opts sock;   /* -4/-6, -L, -D */
} env;

static const struct argp_option options[] = {
	{ "timestamp", 't', 0, 0, "Print TIME(s), seconds since the first connection printed", 0 },
	{ "wide", 'w', 0, 0, "Wide columns (fit IPv6 addresses), with IP", 0 },
	{ "localport", 'L', "PORTS", 0, "Only these local ports (comma-separated)", 0 },
	{ "remoteport", 'D', "PORTS", 0, "Only these remote ports (comma-separated)", 0 },
	{ "ipv4", '4', 0, 0, "Only IPv4 connections", 0 },
	{ "ipv6", '6', 0, 0, "Only IPv6 connections", 0 },
	{ 0 },
};

static const char doc[] =
"Trace the lifespan of TCP connections: one line per connection, when it\n"
"closes.\n"
"\v"
"TX_KB and RX_KB are the KiB it sent (acknowledged by the peer) and\n"
"received, read from the socket at its close, as bcc does: the kernel's\n"
"tcp_sock bytes_acked and bytes_received (-j: \"tx_bytes\" and\n"
"\"rx_bytes\", exact). They count sequence numbers, so a SYN or FIN is one\n"
"byte: a connection's own connect adds 1 to its TX (its SYN), each\n"
"side's FIN 1 to the sender's TX and the receiver's RX. MS is its life, from its first change out of CLOSE\n"
"or LISTEN (the connect's SYN, or the SYN that made an accepted\n"
"connection) to its close. A connection already open when the tool\n"
"started is not reported.\n"
"\n"
"PID and COMM are the process that connected it (connect), or for an\n"
"accepted connection the one that closed it (close or shutdown); the\n"
"tracepoint sock:inet_sock_set_state runs in softirq as often as in the\n"
"process, so these are taken only at changes a process makes itself.\n"
"A connection reset before its process closed it has no process: PID 0\n"
"and COMM '?' (JSON null); the task filters (-p, -u, -n, --cgroup,\n"
"-- COMMAND) keep the connections of their processes only.\n"
"\n"
"Examples:\n"
"  tcplife               # trace all TCP connections\n"
"  tcplife -T            # with TIME (HH:MM:SS)\n"
"  tcplife -t            # with TIME(s)\n"
"  tcplife -w            # wider columns (fit IPv6), with IP\n"
"  tcplife -p 181        # only PID 181's connections\n"
"  tcplife -L 80         # only local port 80\n"
"  tcplife -D 80,443     # only remote ports 80 and 443\n"
"  tcplife -4            # only IPv4\n"
"  tcplife -j            # NDJSON, with the exact bytes\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 't': env.timestamp = true; break;
	case 'w': env.wide = true; break;
	default:
		return tk_sock_opts_parse(&env.sock, key, arg) ? 0 : ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_bcc_missing bcc_missing[] = {
	{ "-s", "bcc's --csv: use -j (NDJSON, one object per connection)" },
	{ "--csv", "use -j (NDJSON, one object per connection)" },
	{ 0 },
};

static const struct tk_tool tool = {
	.name = "tcplife",
	.doc = doc,
	.options = options,
	.parser = parse,
	.bcc_missing = bcc_missing,
};

/* bcc's "%-5s %-10.10s %s%-15s %-5s %-15s %-5s %5s %5s %s", wide
 * "%-5s %-16.16s %-2s %-39s %-5s %-39s %-5s %6s %6s %s"; here each column
 * keeps a blank after it even when a value is wider. */
static const struct tk_col c_pid = { "PID", 5, 1 }, c_ip = { "IP", 2, 1 },
	c_lport = { "LPORT", 5, 1 }, c_rport = { "RPORT", 5, 1 };

static int comm_width(void) { return env.wide ? 16 : 10; }
static int addr_width(void) { return env.wide ? 39 : 15; }
static int kb_width(void) { return env.wide ? 6 : 5; }

static void print_header(void)
{
	if (tk_opts.time)
		printf("%-8s ", "TIME");
	if (env.timestamp)
		printf("%-9s ", "TIME(s)");
	tk_print_cell(stdout, &c_pid, 0, "%s", c_pid.name);
	printf("%-*s ", comm_width(), "COMM");
	if (env.wide)
		tk_print_cell(stdout, &c_ip, 0, "%s", c_ip.name);
	printf("%-*s ", addr_width(), "LADDR");
	tk_print_cell(stdout, &c_lport, 0, "%s", c_lport.name);
	printf("%-*s ", addr_width(), "RADDR");
	tk_print_cell(stdout, &c_rport, 0, "%s", c_rport.name);
	printf("%*s %*s MS\n", kb_width(), "TX_KB", kb_width(), "RX_KB");
}

static unsigned long long first_ns;

static void print_text(const struct tcplife_event *e)
{
	char buf[64];
	size_t comm_len = strnlen(e->who.comm, sizeof(e->who.comm));

	if (tk_opts.time)
		printf("%-8s ", tk_time_str(buf, sizeof(buf)));
	if (env.timestamp)
		printf("%-9.6f ", (e->ts - first_ns) / 1e9);
	tk_print_cell(stdout, &c_pid, 0, "%d", e->who.pid);
	if (e->who.pid)
		tk_print_safe_padded(stdout, e->who.comm,
				     comm_len < (size_t)comm_width() ? comm_len : (size_t)comm_width(),
				     comm_width());
	else
		printf("%-*s", comm_width(), "?");
	putchar(' ');
	if (env.wide)
		tk_print_cell(stdout, &c_ip, 0, "%d", e->id.ip);
	printf("%-*s ", addr_width(), tk_addr_str(e->id.ip, e->id.saddr, buf, sizeof(buf)));
	tk_print_cell(stdout, &c_lport, 0, "%u", e->id.sport);
	printf("%-*s ", addr_width(), tk_addr_str(e->id.ip, e->id.daddr, buf, sizeof(buf)));
	tk_print_cell(stdout, &c_rport, 0, "%u", e->id.dport);
	printf("%*llu %*llu %.2f\n", kb_width(), e->tx_bytes / 1024, kb_width(),
	       e->rx_bytes / 1024, e->span_ns / 1e6);
}

static void print_json(const struct tcplife_event *e)
{
	char buf[64];
	struct tk_json j;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "connection");
	tk_json_time(&j);
	tk_json_double(&j, "ts", (e->ts - first_ns) / 1e9);
	if (e->who.pid) {
		tk_json_int(&j, "pid", e->who.pid);
		tk_json_int(&j, "tid", e->who.tid);
		tk_json_uint(&j, "uid", e->who.uid);
		tk_json_strn(&j, "comm", e->who.comm, strnlen(e->who.comm, sizeof(e->who.comm)));
	} else {
		tk_json_null(&j, "pid");
		tk_json_null(&j, "tid");
		tk_json_null(&j, "uid");
		tk_json_null(&j, "comm");
	}
	tk_json_int(&j, "ip", e->id.ip);
	tk_json_str(&j, "saddr", tk_addr_str(e->id.ip, e->id.saddr, buf, sizeof(buf)));
	tk_json_uint(&j, "sport", e->id.sport);
	tk_json_str(&j, "daddr", tk_addr_str(e->id.ip, e->id.daddr, buf, sizeof(buf)));
	tk_json_uint(&j, "dport", e->id.dport);
	tk_json_uint(&j, "tx_bytes", e->tx_bytes);
	tk_json_uint(&j, "rx_bytes", e->rx_bytes);
	tk_json_uint(&j, "span_ns", e->span_ns);
	tk_json_end(&j);
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct tcplife_event *e = data;

	(void)ctx;
	if (size < sizeof(*e) || (e->id.ip != 4 && e->id.ip != 6))
		return 0;
	if (!first_ns)
		first_ns = e->ts;
	if (tk_opts.json)
		print_json(e);
	else
		print_text(e);
	return 0;
}

static int configure(void *s, void *ctx)
{
	(void)ctx;
	return tk_sock_opts_apply(&env.sock, ((struct tcplife_bpf *)s)->obj);
}

TK_SKEL_OPS(tcplife_bpf);

int main(int argc, char **argv)
{
	struct tcplife_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	skel = tk_load(&tcplife_bpf_ops, configure, NULL);
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json)
		print_header();
	tk_ready();
	tk_events_loop();
	tk_losses_report(skel->obj);
	tcplife_bpf__destroy(skel);
	return tk_exit_status();
}
