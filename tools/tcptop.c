/* tcptop: top TCP connections by bytes sent and received, per interval. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kfunc_or_tp.h"
#include "mapread.h"
#include "tcptop.h"
#include "tcptop.skel.h"
#include "tracekit.h"

enum sort_key { SORT_ALL, SORT_SENT, SORT_RECEIVED };
static const char *const sort_names[] = { "all", "sent", "received" };

static struct {
	bool noclear;
	bool nosummary;
	long maxrows;
	enum sort_key sort;
	struct tk_sock_opts sock;   /* -4/-6 */
} env = { .maxrows = 20 };

static const struct argp_option options[] = {
	{ "noclear", 'C', 0, 0, "Do not clear the screen", 0 },
	{ "nosummary", 'S', 0, 0, "Skip the summary line (time and load average)", 0 },
	{ "sort", 's', "KEY", 0, "Sort by all (default: sent + received), sent or received", 0 },
	{ "rows", 'r', "ROWS", 0, "Rows to print per interval (default 20)", 0 },
	{ "ipv4", '4', 0, 0, "Only IPv4 connections", 0 },
	{ "ipv6", '6', 0, 0, "Only IPv6 connections", 0 },
	{ 0 },
};

static const char doc[] =
"Top TCP connections by bytes received and sent, per process, every\n"
"interval (default 1 s).\n"
"\v"
"Columns as bcc: PID, COMM, LADDR and RADDR (address:port), RX_KB and\n"
"TX_KB (KiB, rounded down); IPv4 connections first, then IPv6 under\n"
"their own header (LADDR6, RADDR6). Rows are sorted by -s, largest\n"
"first; -r rows at most of each. The screen is cleared before each\n"
"interval when stdout is a terminal and -C is not given; -S leaves out\n"
"the summary line. JSON: one record per process and connection per\n"
"interval (\"type\":\"tcptop\", \"interval\", \"rx_bytes\" and\n"
"\"tx_bytes\" exact), every row, not only -r of them.\n"
"\n"
"The bytes are those the process's calls sent and received. Where the\n"
"kernel has them (6.3), the tracepoints sock:sock_send_length and\n"
"sock:sock_recv_length are traced: the return of each send and receive\n"
"call (send, write, sendmsg, sendfile, splice to a socket, io_uring),\n"
"MSG_PEEK reads left out; splice from a socket is not seen. Else the\n"
"kernel functions, as bcc (fentry, else kprobes; -v says which):\n"
"tcp_sendmsg's return and tcp_cleanup_rbuf's bytes copied, which counts\n"
"MSG_PEEK reads too. Counts are kept in the kernel (up to 10240 process\n"
"and connection pairs; more are counted as map insert failures) and\n"
"taken out each interval.\n"
"\n"
"Examples:\n"
"  tcptop                # every second, 20 rows\n"
"  tcptop -C 5 3         # every 5 s, 3 times, without clearing\n"
"  tcptop -s sent -r 5   # the 5 that sent most\n"
"  tcptop -p 181 -j      # only PID 181, NDJSON\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'C': env.noclear = true; break;
	case 'S': env.nosummary = true; break;
	case 'r': env.maxrows = tk_arg_long("--rows", arg, 1, 1000000); break;
	case 's':
		env.sort = tk_arg_choice("--sort", arg, sort_names,
					 sizeof(sort_names) / sizeof(sort_names[0]));
		break;
	default:
		return tk_sock_opts_parse(&env.sock, key, arg) ? 0 : ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "tcptop",
	.doc = doc,
	.options = options,
	.parser = parse,
	.periodic = true,
};

static const char *tp_blind = "splice from a socket (tcp_read_sock)";

struct row {
	struct tcptop_key k;
	struct tcptop_bytes b;
};

static unsigned long long sort_value(const struct row *r)
{
	switch (env.sort) {
	case SORT_SENT: return r->b.sent;
	case SORT_RECEIVED: return r->b.received;
	default: return r->b.sent + r->b.received;
	}
}

/* IPv4 first, then by -s, largest first, then by pid. */
static int by_sort(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	unsigned long long vx = sort_value(x), vy = sort_value(y);

	if (x->k.id.ip != y->k.id.ip)
		return x->k.id.ip - y->k.id.ip;
	return vx < vy ? 1 : vx > vy ? -1 : x->k.pid - y->k.pid;
}

static const char *endpoint(const struct row *r, bool local, char *buf, size_t len)
{
	char addr[64];

	tk_addr_str(r->k.id.ip, local ? r->k.id.saddr : r->k.id.daddr, addr, sizeof(addr));
	snprintf(buf, len, "%s:%u", addr, local ? r->k.id.sport : r->k.id.dport);
	return buf;
}

static void print_json(const struct row *r, int seq)
{
	char buf[64];
	struct tk_json j;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "tcptop");
	tk_json_time(&j);
	tk_json_int(&j, "interval", seq);
	tk_json_int(&j, "pid", r->k.pid);
	tk_json_strn(&j, "comm", r->k.comm, strnlen(r->k.comm, sizeof(r->k.comm)));
	tk_json_int(&j, "ip", r->k.id.ip);
	tk_json_str(&j, "saddr", tk_addr_str(r->k.id.ip, r->k.id.saddr, buf, sizeof(buf)));
	tk_json_uint(&j, "sport", r->k.id.sport);
	tk_json_str(&j, "daddr", tk_addr_str(r->k.id.ip, r->k.id.daddr, buf, sizeof(buf)));
	tk_json_uint(&j, "dport", r->k.id.dport);
	tk_json_uint(&j, "rx_bytes", r->b.received);
	tk_json_uint(&j, "tx_bytes", r->b.sent);
	tk_json_end(&j);
}

/* bcc: "%-7d %-12.12s %-21s %-21s %6d %6d", IPv6 with 32-wide addresses
 * under "\nPID COMM LADDR6 RADDR6 ...". */
static void print_text(const struct row *rows, size_t n)
{
	char l[80], r[80];
	size_t i, shown = 0;
	int ip = 0, w = 21;

	for (i = 0; i < n; i++) {
		if (rows[i].k.id.ip != ip) {
			ip = rows[i].k.id.ip;
			w = ip == 4 ? 21 : 32;
			shown = 0;
			printf("%s%-7s %-12s %-*s %-*s %6s %6s\n", ip == 6 ? "\n" : "", "PID",
			       "COMM", w, ip == 4 ? "LADDR" : "LADDR6", w,
			       ip == 4 ? "RADDR" : "RADDR6", "RX_KB", "TX_KB");
		}
		if (shown++ >= (size_t)env.maxrows)
			continue;
		printf("%-7d ", rows[i].k.pid);
		tk_print_safe_padded(stdout, rows[i].k.comm,
				     strnlen(rows[i].k.comm, 12), 12);
		printf(" %-*s %-*s %6llu %6llu\n", w, endpoint(&rows[i], true, l, sizeof(l)),
		       w, endpoint(&rows[i], false, r, sizeof(r)),
		       rows[i].b.received / 1024, rows[i].b.sent / 1024);
	}
}

static void print_interval(void *arg, int seq)
{
	struct tcptop_bpf *skel = arg;
	static struct row rows[TCPTOP_MAX_ENTRIES];
	int i, n;

	n = tk_map_take_all(skel->maps.bytes, rows, sizeof(rows[0]),
			    offsetof(struct row, b), TCPTOP_MAX_ENTRIES);
	qsort(rows, n, sizeof(rows[0]), by_sort);
	if (tk_opts.json) {
		for (i = 0; i < n; i++)
			print_json(&rows[i], seq);
	} else {
		tk_top_heading(!env.noclear, !env.nosummary);
		print_text(rows, n);
	}
	fflush(stdout);
}

static int configure(void *s, void *ctx)
{
	(void)ctx;
	return tk_sock_opts_apply(&env.sock, ((struct tcptop_bpf *)s)->obj);
}

TK_SKEL_OPS(tcptop_bpf);

int main(int argc, char **argv)
{
	static enum tk_way way;
	struct tcptop_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	if (!tk_opts.interval)
		tk_opts.interval = 1;
	tk_init();
	skel = tk_load_tp_or_kfunc(&tcptop_bpf_ops, configure, NULL, &way, tp_blind);
	if (!tk_opts.json)
		printf("Tracing... Output every %ld secs. Hit Ctrl-C to end\n", tk_opts.interval);
	tk_ready();
	tk_print_intervals(print_interval, skel);
	tk_losses_report(skel->obj);
	tcptop_bpf__destroy(skel);
	return tk_exit_status();
}
