/* tcpconnlat: trace active TCP connects and their latency. */
#include <stdio.h>
#include <string.h>

#include "tcpconnlat.h"
#include "tcpconnlat.skel.h"
#include "tracekit.h"

static struct {
	bool timestamp;
	bool lport;
	double min_ms;
	bool min_set;
	struct tk_sock_opts sock;   /* -4/-6 */
} env;

static const struct argp_option options[] = {
	{ "timestamp", 't', 0, 0, "Print TIME(s), seconds since the first connect printed", 0 },
	{ "lport", 'L', 0, 0, "Print the local port (LPORT)", 0 },
	{ "ipv4", '4', 0, 0, "Only IPv4 connects", 0 },
	{ "ipv6", '6', 0, 0, "Only IPv6 connects", 0 },
	{ 0 },
};

static const char doc[] =
"Trace active TCP connects (connect()) with their latency: from the SYN\n"
"sent to the connection established (the SYN-ACK received).\n"
"\v"
"min_ms: only connects at least that slow (milliseconds, fractions too).\n"
"\n"
"LAT(ms) is the time from the socket's change to SYN_SENT (connect()\n"
"sends the SYN) to its change to ESTABLISHED, both seen at the\n"
"tracepoint sock:inet_sock_set_state. A connect that never gets\n"
"established (refused, timed out, closed first) is not reported. PID and\n"
"COMM are the task that called connect(); the task filters (-p, -u, -n,\n"
"--cgroup, -- COMMAND) apply to it. A connect started before the tool\n"
"was is not reported.\n"
"\n"
"Examples:\n"
"  tcpconnlat            # trace all TCP connects\n"
"  tcpconnlat 1          # only connects slower than 1 ms\n"
"  tcpconnlat 0.1        # only connects slower than 100 us\n"
"  tcpconnlat -t         # with TIME(s)\n"
"  tcpconnlat -p 181     # only PID 181's connects\n"
"  tcpconnlat -L         # with LPORT\n"
"  tcpconnlat -4         # only IPv4\n"
"  tcpconnlat -j         # NDJSON, latency in ns\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 't': env.timestamp = true; break;
	case 'L': env.lport = true; break;
	case '4':
	case '6':
		tk_ip_arg(&env.sock.ip, key);
		break;
	case ARGP_KEY_ARG:
		if (env.min_set)
			tk_usage_error("unexpected argument '%s' after the threshold", arg);
		env.min_ms = tk_arg_double("min_ms", arg, 0, 1e9);
		env.min_set = true;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "tcpconnlat",
	.doc = doc,
	.options = options,
	.parser = parse,
	.args_doc = "[min_ms]",
};

/* bcc's "%-7s %-12s %-2s %-16s [%-6s ]%-16s %-5s %s", TIME(s) "%-9s"
 * before them; each column keeps a blank after it here. */
static const struct tk_col c_pid = { "PID", 7, 1 }, c_ip = { "IP", 2, 1 },
	c_saddr = { "SADDR", 16, 1 }, c_lport = { "LPORT", 6, 1 },
	c_daddr = { "DADDR", 16, 1 }, c_dport = { "DPORT", 5, 1 };

static void print_header(void)
{
	if (tk_opts.time)
		printf("%-8s ", "TIME");
	if (env.timestamp)
		printf("%-9s ", "TIME(s)");
	tk_print_cell(stdout, &c_pid, 0, "%s", c_pid.name);
	printf("%-12s ", "COMM");
	tk_print_cell(stdout, &c_ip, 0, "%s", c_ip.name);
	tk_print_cell(stdout, &c_saddr, 0, "%s", c_saddr.name);
	if (env.lport)
		tk_print_cell(stdout, &c_lport, 0, "%s", c_lport.name);
	tk_print_cell(stdout, &c_daddr, 0, "%s", c_daddr.name);
	tk_print_cell(stdout, &c_dport, 0, "%s", c_dport.name);
	printf("LAT(ms)\n");
}

static unsigned long long first_ns;

static void print_text(const struct tcpconnlat_event *e)
{
	char buf[64];
	size_t comm_len = strnlen(e->who.comm, sizeof(e->who.comm));

	if (tk_opts.time)
		printf("%-8s ", tk_time_str(buf, sizeof(buf)));
	if (env.timestamp)
		printf("%-9.3f ", (e->ts - first_ns) / 1e9);
	tk_print_cell(stdout, &c_pid, 0, "%d", e->who.pid);
	tk_print_safe_padded(stdout, e->who.comm, comm_len < 12 ? comm_len : 12, 12);
	putchar(' ');
	tk_print_cell(stdout, &c_ip, 0, "%d", e->id.ip);
	tk_print_cell(stdout, &c_saddr, 0, "%s", tk_addr_str(e->id.ip, e->id.saddr, buf, sizeof(buf)));
	if (env.lport)
		tk_print_cell(stdout, &c_lport, 0, "%u", e->id.sport);
	tk_print_cell(stdout, &c_daddr, 0, "%s", tk_addr_str(e->id.ip, e->id.daddr, buf, sizeof(buf)));
	tk_print_cell(stdout, &c_dport, 0, "%u", e->id.dport);
	printf("%.2f\n", e->lat_ns / 1e6);
}

static void print_json(const struct tcpconnlat_event *e)
{
	char buf[64];
	struct tk_json j;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "connect");
	tk_json_time(&j);
	tk_json_double(&j, "ts", (e->ts - first_ns) / 1e9);
	tk_json_int(&j, "pid", e->who.pid);
	tk_json_int(&j, "tid", e->who.tid);
	tk_json_uint(&j, "uid", e->who.uid);
	tk_json_strn(&j, "comm", e->who.comm, strnlen(e->who.comm, sizeof(e->who.comm)));
	tk_json_int(&j, "ip", e->id.ip);
	tk_json_str(&j, "saddr", tk_addr_str(e->id.ip, e->id.saddr, buf, sizeof(buf)));
	tk_json_uint(&j, "sport", e->id.sport);
	tk_json_str(&j, "daddr", tk_addr_str(e->id.ip, e->id.daddr, buf, sizeof(buf)));
	tk_json_uint(&j, "dport", e->id.dport);
	tk_json_uint(&j, "latency_ns", e->lat_ns);
	tk_json_end(&j);
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct tcpconnlat_event *e = data;

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
	struct tcpconnlat_bpf *skel = s;

	(void)ctx;
	skel->rodata->min_ns = (unsigned long long)(env.min_ms * 1e6);
	return tk_sock_opts_apply(&env.sock, skel->obj);
}

TK_SKEL_OPS(tcpconnlat_bpf);

int main(int argc, char **argv)
{
	struct tcpconnlat_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	skel = tk_load(&tcpconnlat_bpf_ops, configure, NULL);
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json)
		print_header();
	tk_ready();
	tk_events_loop();
	tk_losses_report(skel->obj);
	tcpconnlat_bpf__destroy(skel);
	return tk_exit_status();
}
