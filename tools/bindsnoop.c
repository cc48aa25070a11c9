/* bindsnoop: trace bind() calls on IPv4 and IPv6 sockets. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bindsnoop.h"
#include "bindsnoop.skel.h"
#include "tracekit.h"

static struct {
	bool timestamp;
	bool wide;
	bool errors;
	bool print_uid;
	bool count;
	struct tk_sock_opts sock;   /* -P as its local ports, -4/-6 */
} env;

enum { K_COUNT = 0x2000 };

static const struct argp_option options[] = {
	{ "timestamp", 't', 0, 0, "Print TIME(s), seconds since the first call printed", 0 },
	{ "wide", 'w', 0, 0, "Wide columns (fit IPv6 addresses)", 0 },
	{ "errors", 'E', 0, 0, "Failed binds too, with RC: 0 or the error's name", 0 },
	{ "port", 'P', "PORTS", 0, "Only these ports (comma-separated)", 0 },
	{ "print-uid", 'U', 0, 0, "UID column", 0 },
	{ "count", K_COUNT, 0, 0, "At the end, binds per address and port, no line per call", 0 },
	{ "ipv4", '4', 0, 0, "Only IPv4 sockets", 0 },
	{ "ipv6", '6', 0, 0, "Only IPv6 sockets", 0 },
	{ 0 },
};

static const char doc[] =
"Trace bind() calls on IPv4 and IPv6 sockets: the address and port, the\n"
"protocol, the socket's options and bound device.\n"
"\v"
"Calls are reported when they return (tracepoints syscalls:sys_enter_bind\n"
"and sys_exit_bind). ADDR and PORT: for a bind that succeeded, the\n"
"socket's address (a port 0 asked for is the one the kernel picked); for\n"
"a failed one (-E), what the caller asked for. Without -E only binds that\n"
"succeeded are reported, as in bcc; with -E failed ones too, RC naming\n"
"the error (bcc: its number).\n"
"\n"
"OPTS: options set on the socket before the call, one letter each (bcc's):\n"
"  F.... IP_FREEBIND   .T... IP_TRANSPARENT   ..N.. IP_BIND_ADDRESS_NO_PORT\n"
"  ...R. SO_REUSEADDR  ....r SO_REUSEPORT\n"
"IF: the interface index of SO_BINDTODEVICE, or 0.\n"
"\n"
"Examples:\n"
"  bindsnoop             # trace binds that succeed\n"
"  bindsnoop -E          # failed ones too, with RC\n"
"  bindsnoop -t          # with TIME(s)\n"
"  bindsnoop -w          # wider columns (fit IPv6)\n"
"  bindsnoop -P 80,81    # only ports 80 and 81\n"
"  bindsnoop -p 181      # only PID 181\n"
"  bindsnoop -U -u 1000  # with UID, only UID 1000\n"
"  bindsnoop --count     # binds per address and port, at the end\n"
"  bindsnoop -j          # NDJSON\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 't': env.timestamp = true; break;
	case 'w': env.wide = true; break;
	case 'E': env.errors = true; break;
	case 'U': env.print_uid = true; break;
	case K_COUNT: env.count = true; break;
	case 'P':
		env.sock.n_lports = tk_ports_arg("--port", arg, env.sock.lports,
						 TK_SOCK_MAX_PORTS);
		break;
	default:
		return tk_sock_opts_parse(&env.sock, key, arg) ? 0 : ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "bindsnoop",
	.doc = doc,
	.options = options,
	.parser = parse,
};

static const char *proto_name(int p, char *buf, size_t len)
{
	switch (p) {
	case 0: return "IP";
	case 1: return "ICMP";
	case 6: return "TCP";
	case 17: return "UDP";
	case 58: return "ICMPV6";
	case 132: return "SCTP";
	case 136: return "UDPLITE";
	case 255: return "RAW";
	case 262: return "MPTCP";
	}
	snprintf(buf, len, "%d", p);
	return buf;
}

static const char *opts_str(unsigned int opts, char *buf)
{
	static const char letters[] = "FTNRr";
	int i;

	for (i = 0; i < 5; i++)
		buf[i] = opts & (1u << i) ? letters[i] : '.';
	buf[5] = 0;
	return buf;
}

static const char *rc_str(int ret, char *buf, size_t len)
{
	const char *n = ret ? tk_errno_name(ret) : NULL;

	if (n)
		return n;
	snprintf(buf, len, "%d", ret < 0 ? -ret : ret);
	return buf;
}

/* bcc's "%8s %-12.12s %-4s %-15s %-5s %5s %2s" (wide: PID 10, ADDR 39),
 * "%6s " UID and "%3s " RC before; each column keeps a blank after it
 * here, RC fits an error's name. */
static const struct tk_col c_uid = { "UID", 6, 0 }, c_rc = { "RC", 13, 1 },
	c_comm = { "COMM", 12, 1 }, c_prot = { "PROT", 4, 1 }, c_port = { "PORT", 5, 0 },
	c_opts = { "OPTS", 5, 1 };

static int pid_width(void) { return env.wide ? 10 : 8; }
static int addr_width(void) { return env.wide ? 39 : 15; }

static void print_header(void)
{
	if (tk_opts.time)
		printf("%-8s ", "TIME");
	if (env.timestamp)
		printf("%-9s ", "TIME(s)");
	if (env.print_uid)
		tk_print_cell(stdout, &c_uid, 0, "%s", c_uid.name);
	if (env.errors)
		tk_print_cell(stdout, &c_rc, 0, "%s", c_rc.name);
	printf("%*s ", pid_width(), "PID");
	tk_print_cell(stdout, &c_comm, 0, "%s", c_comm.name);
	tk_print_cell(stdout, &c_prot, 0, "%s", c_prot.name);
	printf("%-*s ", addr_width(), "ADDR");
	printf("%-5s ", "PORT");
	tk_print_cell(stdout, &c_opts, 0, "%s", c_opts.name);
	printf("IF\n");
}

static unsigned long long first_ns;

static void print_text(const struct bindsnoop_event *e)
{
	char buf[64], o[8];
	size_t comm_len = strnlen(e->who.comm, sizeof(e->who.comm));

	if (tk_opts.time)
		printf("%-8s ", tk_time_str(buf, sizeof(buf)));
	if (env.timestamp)
		printf("%-9.6f ", (e->ts - first_ns) / 1e9);
	if (env.print_uid)
		tk_print_cell(stdout, &c_uid, 0, "%u", e->who.uid);
	if (env.errors)
		tk_print_cell(stdout, &c_rc, 0, "%s", rc_str(e->ret, buf, sizeof(buf)));
	printf("%*d ", pid_width(), e->who.pid);
	tk_print_safe_padded(stdout, e->who.comm,
			     comm_len < (size_t)c_comm.width ? comm_len : (size_t)c_comm.width,
			     c_comm.width);
	putchar(' ');
	tk_print_cell(stdout, &c_prot, 0, "%s", proto_name(e->protocol, buf, sizeof(buf)));
	printf("%-*s ", addr_width(), tk_addr_str(e->id.ip, e->id.saddr, buf, sizeof(buf)));
	tk_print_cell(stdout, &c_port, 0, "%u", e->id.sport);
	tk_print_cell(stdout, &c_opts, 0, "%s", opts_str(e->opts, o));
	printf("%2d\n", e->bound_dev_if);
}

static void print_json(const struct bindsnoop_event *e)
{
	char buf[64], o[8];
	const char *err;
	struct tk_json j;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "bind");
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
	tk_json_str(&j, "proto", proto_name(e->protocol, buf, sizeof(buf)));
	tk_json_int(&j, "ip", e->id.ip);
	tk_json_str(&j, "addr", tk_addr_str(e->id.ip, e->id.saddr, buf, sizeof(buf)));
	tk_json_uint(&j, "port", e->id.sport);
	tk_json_str(&j, "opts", opts_str(e->opts, o));
	tk_json_int(&j, "bound_dev_if", e->bound_dev_if);
	tk_json_uint(&j, "netns", e->netns);
	tk_json_end(&j);
}

/* --count: binds per address and port, in the order first seen. */
struct count {
	int ip;
	unsigned char addr[16];
	unsigned short port;
	unsigned long long n;
};
static struct count *counts;
static size_t n_counts, cap_counts;

static void count_event(const struct bindsnoop_event *e)
{
	size_t i;

	for (i = 0; i < n_counts; i++)
		if (counts[i].ip == e->id.ip && counts[i].port == e->id.sport &&
		    !memcmp(counts[i].addr, e->id.saddr, 16)) {
			counts[i].n++;
			return;
		}
	if (n_counts == cap_counts) {
		cap_counts = cap_counts ? 2 * cap_counts : 64;
		counts = realloc(counts, cap_counts * sizeof(*counts));
		if (!counts) {
			perror("bindsnoop");
			exit(1);
		}
	}
	counts[n_counts].ip = e->id.ip;
	memcpy(counts[n_counts].addr, e->id.saddr, 16);
	counts[n_counts].port = e->id.sport;
	counts[n_counts++].n = 1;
}

static int by_count(const void *a, const void *b)
{
	const struct count *x = a, *y = b;

	return x->n < y->n ? 1 : x->n > y->n ? -1 : 0;
}

/* bcc's "%-32s %20s     %-10s" LADDR LPORT BINDS, most first (without
 * the last column's trailing blanks). */
static void print_counts(void)
{
	char buf[64];
	size_t i;

	qsort(counts, n_counts, sizeof(*counts), by_count);
	if (!tk_opts.json)
		printf("%-32s %20s     %s\n", "LADDR", "LPORT", "BINDS");
	for (i = 0; i < n_counts; i++) {
		const char *a = tk_addr_str(counts[i].ip, counts[i].addr, buf, sizeof(buf));

		if (tk_opts.json) {
			struct tk_json j;

			tk_json_begin(&j, stdout);
			tk_json_str(&j, "type", "count");
			tk_json_int(&j, "ip", counts[i].ip);
			tk_json_str(&j, "addr", a);
			tk_json_uint(&j, "port", counts[i].port);
			tk_json_uint(&j, "binds", counts[i].n);
			tk_json_end(&j);
		} else {
			printf("%-32s %20u     %llu\n", a, counts[i].port, counts[i].n);
		}
	}
	free(counts);
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct bindsnoop_event *e = data;

	(void)ctx;
	if (size < sizeof(*e) || (e->id.ip != 4 && e->id.ip != 6))
		return 0;
	if (env.count) {
		count_event(e);
		return 0;
	}
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
	struct bindsnoop_bpf *skel = s;

	(void)ctx;
	skel->rodata->with_errors = env.errors;
	return tk_sock_opts_apply(&env.sock, skel->obj);
}

TK_SKEL_OPS(bindsnoop_bpf);

int main(int argc, char **argv)
{
	struct bindsnoop_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	skel = tk_load(&bindsnoop_bpf_ops, configure, NULL);
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json && !env.count)
		print_header();
	tk_ready();
	tk_events_loop();
	if (env.count)
		print_counts();
	tk_losses_report(skel->obj);
	bindsnoop_bpf__destroy(skel);
	return tk_exit_status();
}
