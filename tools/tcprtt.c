/* tcprtt: summarize TCP RTT as a histogram. */
#include <arpa/inet.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tcprtt.h"
#include "tcprtt.skel.h"
#include "tracekit.h"

static struct {
	bool millis;
	bool extension;
	int by;
	unsigned short lport, rport;
	int laddr_ip, raddr_ip;
	unsigned char laddr[16], raddr[16];
	int ip;
} env;

static const struct argp_option options[] = {
	{ "interval", 'i', "SEC", 0, "Print a summary every SEC seconds", 0 },
	{ "milliseconds", 'm', 0, 0, "Millisecond histogram", 0 },
	{ "lport", 'p', "PORT", 0, "Only this local port", 0 },
	{ "rport", 'P', "PORT", 0, "Only this remote port", 0 },
	{ "laddr", 'a', "ADDR", 0, "Only this local address (IPv4 or IPv6)", 0 },
	{ "raddr", 'A', "ADDR", 0, "Only this remote address", 0 },
	{ "byladdr", 'b', 0, 0, "A histogram per local address", 0 },
	{ "byraddr", 'B', 0, 0, "A histogram per remote address", 0 },
	{ "extension", 'e', 0, 0, "Print the average RTT of each histogram ([AVG n])", 0 },
	{ "ipv4", '4', 0, 0, "Only IPv4", 0 },
	{ "ipv6", '6', 0, 0, "Only IPv6", 0 },
	{ 0 },
};

static const char doc[] =
"Summarize TCP RTT as a histogram: the smoothed RTT of the socket at each\n"
"segment an established connection receives.\n"
"\v"
"The RTT is the kernel's smoothed estimate (tcp_sock srtt_us >> 3, in\n"
"microseconds, or milliseconds with -m), read at the tracepoint\n"
"tcp:tcp_probe, which the kernel fires at the top of\n"
"tcp_rcv_established (where bcc puts a kprobe): one sample per segment\n"
"received, data or ACK. They are counted in softirq, so the task filters\n"
"(--pid, -u, --cgroup, -- COMMAND) do not apply; -p here is the local\n"
"port, as in bcc, and -a the local address.\n"
"\n"
"Examples:\n"
"  tcprtt                # summarize TCP RTT until Ctrl-C\n"
"  tcprtt -i 1 -d 10     # print 1 second summaries for 10 seconds\n"
"  tcprtt -m -T          # millisecond histogram, with the time\n"
"  tcprtt -p 80          # only local port 80\n"
"  tcprtt -P 80          # only remote port 80\n"
"  tcprtt -a 10.0.0.1    # only local address 10.0.0.1\n"
"  tcprtt -A ::1         # only remote address ::1\n"
"  tcprtt -b             # a histogram per local address\n"
"  tcprtt -B -e          # per remote address, with the average\n"
"  tcprtt -4             # only IPv4\n"
"  tcprtt -j             # NDJSON\n";

static void addr_arg(const char *option, const char *arg, int *ip, unsigned char *addr)
{
	if (inet_pton(AF_INET, arg, addr) == 1)
		*ip = 4;
	else if (inet_pton(AF_INET6, arg, addr) == 1)
		*ip = 6;
	else
		tk_usage_error("invalid %s value '%s': expected an IPv4 or IPv6 address", option, arg);
}

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'i': tk_opts.interval = tk_arg_long("--interval", arg, 1, 1000000); break;
	case 'm': env.millis = true; break;
	case 'p': env.lport = tk_arg_long("--lport", arg, 1, 65535); break;
	case 'P': env.rport = tk_arg_long("--rport", arg, 1, 65535); break;
	case 'a': addr_arg("--laddr", arg, &env.laddr_ip, env.laddr); break;
	case 'A': addr_arg("--raddr", arg, &env.raddr_ip, env.raddr); break;
	case 'b':
	case 'B':
		if (env.by && env.by != (key == 'b' ? TCPRTT_BY_LADDR : TCPRTT_BY_RADDR))
			tk_usage_error("-b/--byladdr and -B/--byraddr exclude each other");
		env.by = key == 'b' ? TCPRTT_BY_LADDR : TCPRTT_BY_RADDR;
		break;
	case 'e': env.extension = true; break;
	case '4':
	case '6':
		tk_ip_arg(&env.ip, key);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_bcc_missing bcc_missing[] = {
	{ "-D", "bcc's --debug (print the BPF program): use -v (attach methods)" },
	{ "--debug", "use -v (attach methods)" },
	{ 0 },
};

static const struct tk_tool tool = {
	.name = "tcprtt",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "pa",
	.bcc_missing = bcc_missing,
};

static const char *unit(void)
{
	return env.millis ? "msecs" : "usecs";
}

struct entry {
	struct tcprtt_key key;
	struct tcprtt_hist h;
};

static int by_addr(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->key.ip != y->key.ip)
		return x->key.ip < y->key.ip ? -1 : 1;
	return memcmp(x->key.addr, y->key.addr, sizeof(x->key.addr));
}

static void print_hist(const struct entry *e)
{
	const char *what = env.by == TCPRTT_BY_LADDR ? "Local Address" :
			   env.by == TCPRTT_BY_RADDR ? "Remote Address" : "All Addresses";
	char buf[64];
	struct tk_json j;

	if (!tk_opts.json) {
		if (env.by || env.extension) {
			printf("\n%s = %s", what,
			       env.by ? tk_addr_str(e->key.ip, e->key.addr, buf, sizeof(buf))
				      : "******");
			if (env.extension)
				printf(" [AVG %llu]", e->h.count ? e->h.sum / e->h.count : 0);
			putchar('\n');
		}
		tk_hist_print_log2(stdout, e->h.slots, TCPRTT_SLOTS, unit());
		return;
	}
	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "histogram");
	tk_json_time(&j);
	if (env.by)
		tk_json_str(&j, env.by == TCPRTT_BY_LADDR ? "laddr" : "raddr",
			    tk_addr_str(e->key.ip, e->key.addr, buf, sizeof(buf)));
	if (e->h.count)
		tk_json_double(&j, "avg", (double)e->h.sum / e->h.count);
	else
		tk_json_null(&j, "avg");
	tk_hist_json_log2(&j, e->h.slots, TCPRTT_SLOTS, unit());
	tk_json_end(&j);
}

/* Each histogram since the last print, taken out of the map. */
static void print_interval(void *arg, int seq)
{
	static struct entry entries[TCPRTT_MAX_KEYS];
	struct tcprtt_bpf *skel = arg;
	char buf[16];
	int n, i;

	(void)seq;
	n = tk_map_take_all(skel->maps.hists, entries, sizeof(entries[0]),
			    offsetof(struct entry, h), TCPRTT_MAX_KEYS);
	if (!tk_opts.json) {
		putchar('\n');
		if (tk_opts.time)
			printf("%-8s\n", tk_time_str(buf, sizeof(buf)));
	}
	if (!n && !env.by) {   /* the one histogram, empty */
		memset(&entries[0], 0, sizeof(entries[0]));
		n = 1;
	}
	qsort(entries, n, sizeof(entries[0]), by_addr);
	for (i = 0; i < n; i++)
		print_hist(&entries[i]);
	fflush(stdout);
}

static int configure(void *s, void *ctx)
{
	struct tcprtt_bpf *skel = s;
	struct tk_sock_opts sock = { .ip = env.ip };

	(void)ctx;
	skel->rodata->millis = env.millis;
	skel->rodata->by = env.by;
	skel->rodata->lport = env.lport;
	skel->rodata->rport = env.rport;
	skel->rodata->laddr_ip = env.laddr_ip;
	skel->rodata->raddr_ip = env.raddr_ip;
	memcpy((void *)skel->rodata->laddr, env.laddr, 16);
	memcpy((void *)skel->rodata->raddr, env.raddr, 16);
	return tk_sock_opts_apply(&sock, skel->obj);
}

TK_SKEL_OPS(tcprtt_bpf);

int main(int argc, char **argv)
{
	struct tcprtt_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	if (tk_filter_any() || tk_opts.command)
		tk_usage_error("tcprtt samples in softirq: the task filters (--pid, --tid, -u, --cgroup, --name, --ppid, -- COMMAND) do not apply");
	if ((env.laddr_ip && env.ip && env.laddr_ip != env.ip) ||
	    (env.raddr_ip && env.ip && env.raddr_ip != env.ip))
		tk_usage_error("the address of -a/-A is not of the family of -%d", env.ip);
	tk_init();
	skel = tk_load(&tcprtt_bpf_ops, configure, NULL);
	if (!tk_opts.json)
		printf("Tracing TCP RTT... Hit Ctrl-C to end.\n");
	tk_ready();
	tk_print_intervals(print_interval, skel);
	tk_losses_report(skel->obj);
	tcprtt_bpf__destroy(skel);
	return tk_exit_status();
}
