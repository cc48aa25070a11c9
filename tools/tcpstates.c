/* tcpstates: trace TCP state changes, with the time spent in each state. */
#include <stdio.h>
#include <string.h>

#include "tcpstates.h"
#include "tcpstates.skel.h"
#include "tracekit.h"

static struct {
	bool timestamp;
	bool wide;
	struct tk_sock_opts sock;   /* -4/-6, -L, -D */
} env;

static const struct argp_option options[] = {
	{ "timestamp", 't', 0, 0, "Print TIME(s), seconds since the first change printed", 0 },
	{ "wide", 'w', 0, 0, "Wide columns (fit IPv6 addresses), with IP", 0 },
	{ "localport", 'L', "PORTS", 0, "Only these local ports (comma-separated)", 0 },
	{ "remoteport", 'D', "PORTS", 0, "Only these remote ports (comma-separated)", 0 },
	{ "ipv4", '4', 0, 0, "Only IPv4 sockets", 0 },
	{ "ipv6", '6', 0, 0, "Only IPv6 sockets", 0 },
	{ 0 },
};

static const char doc[] =
"Trace TCP state changes and the time spent in each state.\n"
"\v"
"One line per change of a TCP socket's state, at the tracepoint\n"
"sock:inet_sock_set_state. SKADDR is the socket's kernel address, which\n"
"tells its changes apart. C-PID and C-COMM are the task on the CPU at the\n"
"change, as in bcc: the socket's process in its own system calls\n"
"(connect, listen, close, shutdown), else whichever task was running when\n"
"a packet made the change in softirq. The task filters (-p, -u, -n,\n"
"--cgroup, -- COMMAND) keep the changes made while their tasks ran.\n"
"\n"
"MS is the time the socket spent in OLDSTATE, from the change that put it\n"
"there; \"-\" (JSON null) when that change was not seen: a socket's first\n"
"change (out of CLOSE, or an accepted socket's LISTEN -> SYN_RECV), or\n"
"one made before the tool started. bcc prints 0 for these.\n"
"\n"
"A connecting socket's first change, CLOSE -> SYN_SENT, comes before the\n"
"kernel picks its local port: LPORT is 0 there (so -L with that port\n"
"does not see it). An accepted socket's first change, LISTEN -> SYN_RECV,\n"
"is made as the kernel copies it from the listener: some kernels (6.1)\n"
"make it before they set its peer, and it shows the listener's addresses\n"
"and remote port 0 (its SKADDR is the new socket's). An IPv6 socket connected to an IPv4 address is IPv6,\n"
"with v4-mapped addresses (::ffff:a.b.c.d).\n"
"\n"
"Examples:\n"
"  tcpstates             # trace all TCP state changes\n"
"  tcpstates -t          # with TIME(s)\n"
"  tcpstates -T          # with TIME (HH:MM:SS)\n"
"  tcpstates -w          # wider columns (fit IPv6), with IP\n"
"  tcpstates -L 80,81    # only local ports 80 and 81\n"
"  tcpstates -D 80       # only remote port 80\n"
"  tcpstates -4          # only IPv4\n"
"  tcpstates -j          # NDJSON\n";

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
	{ "-s", "bcc's --csv: use -j (NDJSON, one object per change)" },
	{ "--csv", "use -j (NDJSON, one object per change)" },
	{ "-Y", "bcc's --journal: use -j and send the lines to the journal (systemd-cat)" },
	{ "--journal", "use -j and send the lines to the journal (systemd-cat)" },
	{ 0 },
};

static const struct tk_tool tool = {
	.name = "tcpstates",
	.doc = doc,
	.options = options,
	.parser = parse,
	.bcc_missing = bcc_missing,
};

/* bcc's "%-16s %-5s %-10.10s %s%-15s %-5s %-15s %-5s %-11s -> %-11s %s",
 * wide "%-16s %-5s %-16.16s %-2s %-39s %-5s %-39s %-5s %-11s -> %-11s %s";
 * here each column keeps a blank after it even when a value is wider. */
static const struct tk_col c_skaddr = { "SKADDR", 16, 1 }, c_pid = { "C-PID", 5, 1 },
	c_ip = { "IP", 2, 1 }, c_lport = { "LPORT", 5, 1 }, c_rport = { "RPORT", 5, 1 },
	c_old = { "OLDSTATE", 11, 1 }, c_new = { "NEWSTATE", 11, 1 };

static int comm_width(void) { return env.wide ? 16 : 10; }
static int addr_width(void) { return env.wide ? 39 : 15; }

static void print_header(void)
{
	if (tk_opts.time)
		printf("%-8s ", "TIME");
	if (env.timestamp)
		printf("%-9s ", "TIME(s)");
	tk_print_cell(stdout, &c_skaddr, 0, "%s", c_skaddr.name);
	tk_print_cell(stdout, &c_pid, 0, "%s", c_pid.name);
	printf("%-*s ", comm_width(), "C-COMM");
	if (env.wide)
		tk_print_cell(stdout, &c_ip, 0, "%s", c_ip.name);
	printf("%-*s ", addr_width(), "LADDR");
	tk_print_cell(stdout, &c_lport, 0, "%s", c_lport.name);
	printf("%-*s ", addr_width(), "RADDR");
	tk_print_cell(stdout, &c_rport, 0, "%s", c_rport.name);
	tk_print_cell(stdout, &c_old, 0, "%s", c_old.name);
	printf("-> ");
	tk_print_cell(stdout, &c_new, 0, "%s", c_new.name);
	printf("MS\n");
}

static unsigned long long first_ns;

static void print_text(const struct tcpstates_event *e)
{
	char buf[64], s1[16], s2[16];
	size_t comm_len = strnlen(e->comm, sizeof(e->comm));

	if (tk_opts.time)
		printf("%-8s ", tk_time_str(buf, sizeof(buf)));
	if (env.timestamp)
		printf("%-9.6f ", (e->ts - first_ns) / 1e9);
	tk_print_cell(stdout, &c_skaddr, 0, "%llx", e->skaddr);
	tk_print_cell(stdout, &c_pid, 0, "%d", e->pid);
	tk_print_safe_padded(stdout, e->comm,
			     comm_len < (size_t)comm_width() ? comm_len : (size_t)comm_width(),
			     comm_width());
	putchar(' ');
	if (env.wide)
		tk_print_cell(stdout, &c_ip, 0, "%d", e->id.ip);
	printf("%-*s ", addr_width(), tk_addr_str(e->id.ip, e->id.saddr, buf, sizeof(buf)));
	tk_print_cell(stdout, &c_lport, 0, "%u", e->id.sport);
	printf("%-*s ", addr_width(), tk_addr_str(e->id.ip, e->id.daddr, buf, sizeof(buf)));
	tk_print_cell(stdout, &c_rport, 0, "%u", e->id.dport);
	tk_print_cell(stdout, &c_old, 0, "%s", tk_tcp_state_name(e->oldstate, s1, sizeof(s1)));
	printf("-> ");
	tk_print_cell(stdout, &c_new, 0, "%s", tk_tcp_state_name(e->newstate, s2, sizeof(s2)));
	if (e->prev_ts && e->prev_ts <= e->ts)
		printf("%.3f\n", (e->ts - e->prev_ts) / 1e6);
	else
		printf("-\n");
}

static void print_json(const struct tcpstates_event *e)
{
	char buf[64], s[16];
	struct tk_json j;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "state");
	tk_json_time(&j);
	tk_json_double(&j, "ts", (e->ts - first_ns) / 1e9);
	snprintf(buf, sizeof(buf), "0x%llx", e->skaddr);
	tk_json_str(&j, "skaddr", buf);
	tk_json_int(&j, "pid", e->pid);
	tk_json_int(&j, "tid", e->tid);
	tk_json_uint(&j, "uid", e->uid);
	tk_json_strn(&j, "comm", e->comm, strnlen(e->comm, sizeof(e->comm)));
	tk_json_int(&j, "ip", e->id.ip);
	tk_json_str(&j, "saddr", tk_addr_str(e->id.ip, e->id.saddr, buf, sizeof(buf)));
	tk_json_uint(&j, "sport", e->id.sport);
	tk_json_str(&j, "daddr", tk_addr_str(e->id.ip, e->id.daddr, buf, sizeof(buf)));
	tk_json_uint(&j, "dport", e->id.dport);
	tk_json_str(&j, "oldstate", tk_tcp_state_name(e->oldstate, s, sizeof(s)));
	tk_json_str(&j, "newstate", tk_tcp_state_name(e->newstate, s, sizeof(s)));
	if (e->prev_ts && e->prev_ts <= e->ts)
		tk_json_uint(&j, "old_state_ns", e->ts - e->prev_ts);
	else
		tk_json_null(&j, "old_state_ns");
	tk_json_end(&j);
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct tcpstates_event *e = data;

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
	return tk_sock_opts_apply(&env.sock, ((struct tcpstates_bpf *)s)->obj);
}

TK_SKEL_OPS(tcpstates_bpf);

int main(int argc, char **argv)
{
	struct tcpstates_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	skel = tk_load(&tcpstates_bpf_ops, configure, NULL);
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json)
		print_header();
	tk_ready();
	tk_events_loop();
	tk_losses_report(skel->obj);
	tcpstates_bpf__destroy(skel);
	return tk_exit_status();
}
