/* tcpretrans: trace or count TCP retransmits (and tail loss probes). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tcpretrans.h"
#include "tcpretrans.skel.h"
#include "tracekit.h"

static struct {
	bool lossprobe;
	bool count;
	bool sequence;
	struct tk_sock_opts sock;   /* -4/-6 */
} env;

static const struct argp_option options[] = {
	{ "lossprobe", 'l', 0, 0, "Include tail loss probe attempts (needs fentry or kprobes)", 0 },
	{ "count", 'c', 0, 0, "Count retransmits per flow, printed at the end", 0 },
	{ "sequence", 's', 0, 0, "Print the retransmitted segment's sequence number (SEQ)", 0 },
	{ "ipv4", '4', 0, 0, "Only IPv4", 0 },
	{ "ipv6", '6', 0, 0, "Only IPv6", 0 },
	{ 0 },
};

static const char doc[] =
"Trace TCP retransmits: one line each, with the flow's addresses and the\n"
"socket's state; or count them per flow (-c).\n"
"\v"
"Retransmits are seen at the tracepoint tcp:tcp_retransmit_skb, which\n"
"the kernel fires for each retransmitted skb (RTO, fast and RACK\n"
"retransmits, SYN retransmits, and tail loss probes that retransmit):\n"
"T is R. -l adds each tail loss probe attempt (T is L) from a probe on\n"
"the kernel function tcp_send_loss_probe: it needs fentry or kprobes (a\n"
"kernel without both, such as one with CONFIG_KPROBES unset that refuses\n"
"fentry, cannot run -l; its probes that retransmit are still R lines).\n"
"SYN-ACK retransmits of a listener are not traced.\n"
"\n"
"PID is the task that was on the CPU, as in bcc: most retransmits are\n"
"sent from timers and softirq, where it is 0 or unrelated; the task\n"
"filters (-p, -u, --cgroup, -- COMMAND) do not apply.\n"
"\n"
"-c counts per flow (local and remote address and port) until the end:\n"
"RETRANSMITS is the segments retransmitted, as the kernel's own counter\n"
"TcpRetransSegs (nstat) counts them (an skb may carry several); -j gives\n"
"\"retransmits\" (skbs) and \"segments\" (and \"loss_probes\" with -l).\n"
"\n"
"Examples:\n"
"  tcpretrans            # trace TCP retransmits\n"
"  tcpretrans -l         # with tail loss probe attempts\n"
"  tcpretrans -c         # count per flow, printed at Ctrl-C\n"
"  tcpretrans -s         # with the sequence number\n"
"  tcpretrans -4         # only IPv4\n"
"  tcpretrans -j         # NDJSON\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	(void)arg;
	switch (key) {
	case 'l': env.lossprobe = true; break;
	case 'c': env.count = true; break;
	case 's': env.sequence = true; break;
	case '4':
	case '6':
		tk_ip_arg(&env.sock.ip, key);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "tcpretrans",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "c",
};

static const char *endpoint(int ip, const unsigned char *addr, unsigned port, char *buf,
			    size_t len)
{
	char a[64];

	snprintf(buf, len, "%s:%u", tk_addr_str(ip, addr, a, sizeof(a)), port);
	return buf;
}

static void print_header(void)
{
	printf("%-8s %-7s %-2s %-20s %1s> %-20s", "TIME", "PID", "IP", "LADDR:LPORT", "T",
	       "RADDR:RPORT");
	if (env.sequence)
		printf(" %-12s %-10s\n", "STATE", "SEQ");
	else
		printf(" %-4s\n", "STATE");
}

static const char *type_name(int type)
{
	return type == TCPRETRANS_LOSS_PROBE ? "L" : "R";
}

static void print_text(const struct tcpretrans_event *e)
{
	char buf[96], st[16];

	printf("%-8s ", tk_time_str(buf, sizeof(buf)));
	printf("%-7d %-2d ", e->pid, e->id.ip);
	printf("%-20s ", endpoint(e->id.ip, e->id.saddr, e->id.sport, buf, sizeof(buf)));
	printf("%1s> ", type_name(e->type));
	printf("%-20s ", endpoint(e->id.ip, e->id.daddr, e->id.dport, buf, sizeof(buf)));
	if (env.sequence)
		printf("%-12s %u\n", tk_tcp_state_name(e->state, st, sizeof(st)), e->seq);
	else
		printf("%s\n", tk_tcp_state_name(e->state, st, sizeof(st)));
}

static void json_flow(struct tk_json *j, const struct tk_sock_id *id)
{
	char buf[64];

	tk_json_int(j, "ip", id->ip);
	tk_json_str(j, "saddr", tk_addr_str(id->ip, id->saddr, buf, sizeof(buf)));
	tk_json_uint(j, "sport", id->sport);
	tk_json_str(j, "daddr", tk_addr_str(id->ip, id->daddr, buf, sizeof(buf)));
	tk_json_uint(j, "dport", id->dport);
}

static unsigned long long first_ns;

static void print_json(const struct tcpretrans_event *e)
{
	char st[16];
	struct tk_json j;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", e->type == TCPRETRANS_LOSS_PROBE ? "loss_probe" : "retransmit");
	tk_json_time(&j);
	tk_json_double(&j, "ts", (e->ts - first_ns) / 1e9);
	tk_json_int(&j, "pid", e->pid);
	json_flow(&j, &e->id);
	tk_json_str(&j, "state", tk_tcp_state_name(e->state, st, sizeof(st)));
	if (e->type == TCPRETRANS_RETRANSMIT) {
		tk_json_uint(&j, "seq", e->seq);
		tk_json_uint(&j, "segments", e->segs);
	}
	tk_json_end(&j);
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct tcpretrans_event *e = data;

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

struct flow {
	struct tk_sock_id id;
	struct tcpretrans_count c;
};

/* bcc's order: fewest first. */
static int flow_cmp(const void *a, const void *b)
{
	const struct flow *x = a, *y = b;

	if (x->c.segments != y->c.segments)
		return x->c.segments < y->c.segments ? -1 : 1;
	return memcmp(&x->id, &y->id, sizeof(x->id));
}

static void print_counts(struct tcpretrans_bpf *skel)
{
	static struct flow flows[TCPRETRANS_MAX_FLOWS];
	int n, i;

	n = tk_map_take_all(skel->maps.counts, flows, sizeof(flows[0]),
			    offsetof(struct flow, c), TCPRETRANS_MAX_FLOWS);
	qsort(flows, n, sizeof(*flows), flow_cmp);
	if (!tk_opts.json)
		printf("\n%-25s %-25s %-10s\n", "LADDR:LPORT", "RADDR:RPORT", "RETRANSMITS");
	for (i = 0; i < n; i++) {
		const struct flow *f = &flows[i];
		char a[64], l[96], r[96];

		if (tk_opts.json) {
			struct tk_json j;

			tk_json_begin(&j, stdout);
			tk_json_str(&j, "type", "flow");
			json_flow(&j, &f->id);
			tk_json_uint(&j, "retransmits", f->c.retransmits);
			tk_json_uint(&j, "segments", f->c.segments);
			if (env.lossprobe)
				tk_json_uint(&j, "loss_probes", f->c.loss_probes);
			tk_json_end(&j);
			continue;
		}
		snprintf(l, sizeof(l), "[%s]#%u", tk_addr_str(f->id.ip, f->id.saddr, a, sizeof(a)),
			 f->id.sport);
		snprintf(r, sizeof(r), "[%s]#%u", tk_addr_str(f->id.ip, f->id.daddr, a, sizeof(a)),
			 f->id.dport);
		printf("%-20s <-> %-20s %10llu\n", l, r, f->c.segments);
	}
}

static int configure(void *s, void *ctx)
{
	struct tcpretrans_bpf *skel = s;

	(void)ctx;
	skel->rodata->count_mode = env.count;
	skel->rodata->tp_has_err = tk_tp_nargs("tcp_retransmit_skb") >= 3;
	if (!env.lossprobe)
		tk_programs_off(skel->obj, "tlp_");
	return tk_sock_opts_apply(&env.sock, skel->obj);
}

TK_SKEL_OPS(tcpretrans_bpf);

int main(int argc, char **argv)
{
	struct tcpretrans_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	if (tk_filter_any() || tk_opts.command)
		tk_usage_error("tcpretrans traces the kernel's retransmits (timers, softirq): the task filters (-p, --tid, -u, --cgroup, --name, --ppid, -- COMMAND) do not apply");
	tk_init();
	skel = tk_load(&tcpretrans_bpf_ops, configure, NULL);
	if (!env.count)
		tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json && !env.count)
		print_header();
	else if (!tk_opts.json)
		printf("Tracing retransmits ... Hit Ctrl-C to end\n");
	tk_ready();
	if (env.count)
		tk_sleep_until(-1);
	else
		tk_events_loop();
	if (env.count)
		print_counts(skel);
	tk_losses_report(skel->obj);
	tcpretrans_bpf__destroy(skel);
	return tk_exit_status();
}
