/* tcptracer: trace TCP connects, accepts and closes. */
#include <stdio.h>
#include <string.h>

#include "tcptracer.h"
#include "tcptracer.skel.h"
#include "tracekit.h"

static struct {
	bool timestamp;
	bool wide;          /* bcc's -v: TYPE words, NETNS */
	unsigned int netns; /* -N */
	struct tk_sock_opts sock;   /* -4/-6 */
} env;

static const struct argp_option options[] = {
	{ "timestamp", 't', 0, 0, "Print TIME(s), seconds since the first event (-v: TIME(ns))", 0 },
	{ "netns", 'N', "NETNS", 0, "Only sockets of this network namespace (its inode number)", 0 },
	{ "ipv4", '4', 0, 0, "Only IPv4 connections", 0 },
	{ "ipv6", '6', 0, 0, "Only IPv6 connections", 0 },
	{ "print-verbose", 'v', 0, 0, "bcc's -v: TYPE as a word, and NETNS (--verbose: libbpf messages and attach methods)", 0 },
	{ 0 },
};

static const char doc[] =
"Trace TCP connections: connect (C), accept (A) and close (X) events.\n"
"\v"
"C  a connect that completed: its socket's change from SYN_SENT to\n"
"   ESTABLISHED (tracepoint sock:inet_sock_set_state), reported then,\n"
"   with the process that called connect(). A refused or timed-out\n"
"   connect is not reported, as in bcc.\n"
"A  an accept() or accept4() that returned a TCP socket (tracepoints\n"
"   syscalls:sys_exit_accept4 and sys_exit_accept), with the accepting\n"
"   process.\n"
"X  a close() of the last descriptor of a TCP socket that had a peer and\n"
"   was past its handshake (not SYN_SENT, SYN_RECV or LISTEN), with the\n"
"   closing process (tracepoint syscalls:sys_enter_close), as bcc's\n"
"   tcp_close probe. A socket released by its process's exit, by\n"
"   close_range() or by a last reference held elsewhere is not seen.\n"
"\n"
"SADDR and SPORT are the socket's own end, DADDR and DPORT its peer's;\n"
"IPv6 addresses are in brackets, as bcc prints them.\n"
"\n"
"Examples:\n"
"  tcptracer             # trace TCP connects, accepts and closes\n"
"  tcptracer -t          # with TIME(s)\n"
"  tcptracer -v          # TYPE as a word, and NETNS\n"
"  tcptracer -p 181      # only PID 181\n"
"  tcptracer -N 4026531840  # only this network namespace\n"
"  tcptracer -4          # only IPv4\n"
"  tcptracer -j          # NDJSON\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 't': env.timestamp = true; break;
	case 'v': env.wide = true; break;
	case 'N': env.netns = tk_arg_long("--netns", arg, 1, 0xffffffffL); break;
	default:
		return tk_sock_opts_parse(&env.sock, key, arg) ? 0 : ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "tcptracer",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "v",
};

static const char *type_letter[] = { "U", "C", "A", "X" };
static const char *type_word[] = { "unknown", "connect", "accept", "close" };

static unsigned int type_of(const struct tcptracer_event *e)
{
	return e->type <= TCPTRACER_CLOSE ? e->type : 0;
}

/* bcc's "%-2s %-6d %-16s %-2d %-16s %-16s %-6d %-6d", -v "%-12s ..."
 * and " %-8d" NETNS; each column keeps a blank after it here. */
static const struct tk_col c_pid = { "PID", 6, 1 }, c_comm = { "COMM", 16, 1 },
	c_ip = { "IP", 2, 1 }, c_saddr = { "SADDR", 16, 1 }, c_daddr = { "DADDR", 16, 1 },
	c_sport = { "SPORT", 6, 1 }, c_dport = { "DPORT", 6, 1 };

static bool show_netns(void) { return env.wide && !env.netns; }

static void print_header(void)
{
	if (tk_opts.time)
		printf("%-8s ", "TIME");
	if (env.timestamp)
		printf(env.wide ? "%-14s " : "%-9s ", env.wide ? "TIME(ns)" : "TIME(s)");
	printf(env.wide ? "%-12s " : "%-2s ", env.wide ? "TYPE" : "T");
	tk_print_cell(stdout, &c_pid, 0, "%s", c_pid.name);
	tk_print_cell(stdout, &c_comm, 0, "%s", c_comm.name);
	tk_print_cell(stdout, &c_ip, 0, "%s", c_ip.name);
	tk_print_cell(stdout, &c_saddr, 0, "%s", c_saddr.name);
	tk_print_cell(stdout, &c_daddr, 0, "%s", c_daddr.name);
	tk_print_cell(stdout, &c_sport, 0, "%s", c_sport.name);
	if (show_netns()) {
		tk_print_cell(stdout, &c_dport, 0, "%s", c_dport.name);
		printf("NETNS\n");
	} else {
		printf("DPORT\n");
	}
}

static unsigned long long first_ns;

static const char *addr(const struct tcptracer_event *e, const unsigned char *a,
			char *buf, size_t len)
{
	char b[64];

	if (e->id.ip == 4)
		return tk_addr_str(4, a, buf, len);
	snprintf(buf, len, "[%s]", tk_addr_str(6, a, b, sizeof(b)));
	return buf;
}

static void print_text(const struct tcptracer_event *e)
{
	char buf[80];
	size_t comm_len = strnlen(e->who.comm, sizeof(e->who.comm));

	if (tk_opts.time)
		printf("%-8s ", tk_time_str(buf, sizeof(buf)));
	if (env.timestamp) {
		if (env.wide)
			printf("%-14llu ", e->ts - first_ns);
		else
			printf("%-9.3f ", (e->ts - first_ns) / 1e9);
	}
	if (env.wide)
		printf("%-12s ", type_word[type_of(e)]);
	else
		printf("%-2s ", type_letter[type_of(e)]);
	tk_print_cell(stdout, &c_pid, 0, "%d", e->who.pid);
	tk_print_safe_padded(stdout, e->who.comm, comm_len, c_comm.width);
	putchar(' ');
	tk_print_cell(stdout, &c_ip, 0, "%d", e->id.ip);
	tk_print_cell(stdout, &c_saddr, 0, "%s", addr(e, e->id.saddr, buf, sizeof(buf)));
	tk_print_cell(stdout, &c_daddr, 0, "%s", addr(e, e->id.daddr, buf, sizeof(buf)));
	tk_print_cell(stdout, &c_sport, 0, "%u", e->id.sport);
	if (show_netns()) {
		tk_print_cell(stdout, &c_dport, 0, "%u", e->id.dport);
		printf("%u\n", e->netns);
	} else {
		printf("%u\n", e->id.dport);
	}
}

static void print_json(const struct tcptracer_event *e)
{
	char buf[64];
	struct tk_json j;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", type_word[type_of(e)]);
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
	tk_json_uint(&j, "netns", e->netns);
	tk_json_end(&j);
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct tcptracer_event *e = data;

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
	struct tcptracer_bpf *skel = s;

	(void)ctx;
	skel->rodata->netns_only = env.netns;
	return tk_sock_opts_apply(&env.sock, skel->obj);
}

TK_SKEL_OPS(tcptracer_bpf);

int main(int argc, char **argv)
{
	struct tcptracer_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	skel = tk_load(&tcptracer_bpf_ops, configure, NULL);
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json)
		print_header();
	tk_ready();
	tk_events_loop();
	tk_losses_report(skel->obj);
	tcptracer_bpf__destroy(skel);
	return tk_exit_status();
}
