/* solisten: trace listen() calls on IPv4 and IPv6 sockets. */
#include <stdio.h>
#include <string.h>

#include "solisten.h"
#include "solisten.skel.h"
#include "tracekit.h"

static struct {
	bool timestamp;
	bool show_netns;
	unsigned int netns;
	struct tk_sock_opts sock;   /* -4/-6 */
} env;

enum { K_SHOW_NETNS = 0x2000 };

static const struct argp_option options[] = {
	{ "timestamp", 't', 0, 0, "Print TIME(s), seconds since the first call printed", 0 },
	{ "netns", 'n', "NETNS", 0, "Only sockets of this network namespace (its inode number)", 0 },
	{ "show-netns", K_SHOW_NETNS, 0, 0, "NETNS column: the socket's network namespace", 0 },
	{ "ipv4", '4', 0, 0, "Only IPv4 sockets", 0 },
	{ "ipv6", '6', 0, 0, "Only IPv6 sockets", 0 },
	{ 0 },
};

static const char doc[] =
"Trace listen() calls on IPv4 and IPv6 sockets.\n"
"\v"
"Every call is reported once it returns (tracepoints syscalls:sys_enter_listen\n"
"and sys_exit_listen), failed ones too: RET is 0 or the error (-errno; -j:\n"
"\"error\" names it). A second listen() on a listening socket, which only\n"
"changes its backlog, is reported as well. BACKLOG is the caller's value\n"
"(the kernel caps it at net.core.somaxconn). PORT and ADDR are the\n"
"socket's address after the call: for a socket that was not bound, the\n"
"port the kernel picked. A listen() on another kind of socket (unix) is\n"
"not reported.\n"
"\n"
"Examples:\n"
"  solisten              # trace listen() calls\n"
"  solisten -p 1234      # only PID 1234\n"
"  solisten -n 4026531840   # only this network namespace\n"
"  solisten --show-netns # with NETNS\n"
"  solisten -j           # NDJSON\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 't': env.timestamp = true; break;
	case 'n': env.netns = tk_arg_long("--netns", arg, 1, 0xffffffffL); break;
	case K_SHOW_NETNS: env.show_netns = true; break;
	default:
		return tk_sock_opts_parse(&env.sock, key, arg) ? 0 : ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "solisten",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "n",
};

/* bcc's "%-7d %-12.12s [%-12d] %-6s %-8d %-5d %-39s" with libbpf-tools'
 * RET after COMM; each column keeps a blank after it here. */
static const struct tk_col c_pid = { "PID", 7, 1 }, c_comm = { "COMM", 12, 1 },
	c_ret = { "RET", 3, 1 }, c_netns = { "NETNS", 12, 1 }, c_proto = { "PROTO", 6, 1 },
	c_backlog = { "BACKLOG", 8, 1 }, c_port = { "PORT", 5, 1 };

static void print_header(void)
{
	if (tk_opts.time)
		printf("%-8s ", "TIME");
	if (env.timestamp)
		printf("%-9s ", "TIME(s)");
	tk_print_cell(stdout, &c_pid, 0, "%s", c_pid.name);
	tk_print_cell(stdout, &c_comm, 0, "%s", c_comm.name);
	tk_print_cell(stdout, &c_ret, 0, "%s", c_ret.name);
	if (env.show_netns)
		tk_print_cell(stdout, &c_netns, 0, "%s", c_netns.name);
	tk_print_cell(stdout, &c_proto, 0, "%s", c_proto.name);
	tk_print_cell(stdout, &c_backlog, 0, "%s", c_backlog.name);
	tk_print_cell(stdout, &c_port, 0, "%s", c_port.name);
	printf("ADDR\n");
}

static const char *proto_str(const struct solisten_event *e, char *buf, size_t len)
{
	const char *p = e->type == 1 ? "TCP" : e->type == 2 ? "UDP" : "UNK";

	snprintf(buf, len, "%sv%d", p, e->id.ip);
	return buf;
}

static unsigned long long first_ns;

static void print_text(const struct solisten_event *e)
{
	char buf[64];
	size_t comm_len = strnlen(e->who.comm, sizeof(e->who.comm));

	if (tk_opts.time)
		printf("%-8s ", tk_time_str(buf, sizeof(buf)));
	if (env.timestamp)
		printf("%-9.6f ", (e->ts - first_ns) / 1e9);
	tk_print_cell(stdout, &c_pid, 0, "%d", e->who.pid);
	tk_print_safe_padded(stdout, e->who.comm,
			     comm_len < (size_t)c_comm.width ? comm_len : (size_t)c_comm.width,
			     c_comm.width);
	putchar(' ');
	tk_print_cell(stdout, &c_ret, 0, "%d", e->ret);
	if (env.show_netns)
		tk_print_cell(stdout, &c_netns, 0, "%u", e->netns);
	tk_print_cell(stdout, &c_proto, 0, "%s", proto_str(e, buf, sizeof(buf)));
	tk_print_cell(stdout, &c_backlog, 0, "%d", e->backlog);
	tk_print_cell(stdout, &c_port, 0, "%u", e->id.sport);
	printf("%s\n", tk_addr_str(e->id.ip, e->id.saddr, buf, sizeof(buf)));
}

static void print_json(const struct solisten_event *e)
{
	char buf[64];
	const char *err;
	struct tk_json j;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "listen");
	tk_json_time(&j);
	tk_json_double(&j, "ts", (e->ts - first_ns) / 1e9);
	tk_json_int(&j, "pid", e->who.pid);
	tk_json_int(&j, "tid", e->who.tid);
	tk_json_uint(&j, "uid", e->who.uid);
	tk_json_strn(&j, "comm", e->who.comm, strnlen(e->who.comm, sizeof(e->who.comm)));
	tk_json_int(&j, "ret", e->ret);
	if (e->ret < 0 && (err = tk_errno_name(e->ret)))
		tk_json_str(&j, "error", err);
	else
		tk_json_null(&j, "error");
	tk_json_str(&j, "proto", proto_str(e, buf, sizeof(buf)));
	tk_json_int(&j, "ip", e->id.ip);
	tk_json_int(&j, "backlog", e->backlog);
	tk_json_str(&j, "addr", tk_addr_str(e->id.ip, e->id.saddr, buf, sizeof(buf)));
	tk_json_uint(&j, "port", e->id.sport);
	tk_json_uint(&j, "netns", e->netns);
	tk_json_end(&j);
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct solisten_event *e = data;

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
	struct solisten_bpf *skel = s;

	(void)ctx;
	skel->rodata->netns_only = env.netns;
	return tk_sock_opts_apply(&env.sock, skel->obj);
}

TK_SKEL_OPS(solisten_bpf);

int main(int argc, char **argv)
{
	struct solisten_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	skel = tk_load(&solisten_bpf_ops, configure, NULL);
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json)
		print_header();
	tk_ready();
	tk_events_loop();
	tk_losses_report(skel->obj);
	solisten_bpf__destroy(skel);
	return tk_exit_status();
}
