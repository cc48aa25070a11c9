/* tcpdrop: IP packets the kernel dropped, with the reason it gives. */
#include <bpf/btf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize.h"
#include "tcpdrop.h"
#include "tcpdrop.skel.h"
#include "tracekit.h"

static struct {
	bool kstack;
	bool unspecified;
	int ip;
} env;

enum { OPT_UNSPECIFIED = 0x100 };

static const struct argp_option options[] = {
	{ "ipv4", '4', 0, 0, "Only IPv4 packets", 0 },
	{ "ipv6", '6', 0, 0, "Only IPv6 packets", 0 },
	{ "kernel-stack", 'K', 0, 0, "The kernel stack of each drop", 0 },
	{ "unspecified", OPT_UNSPECIFIED, 0, 0,
	  "Also frees with reason NOT_SPECIFIED (see below)", 0 },
	{ 0 },
};

static const char doc[] =
"Trace the IP packets the kernel drops, with the reason it gives.\n"
"\v"
"One line per packet freed at the tracepoint skb:kfree_skb: TCP, UDP and\n"
"every other IP protocol (PROTO), IPv4 and IPv6, received or sent; other\n"
"packets (ARP, ...) are left out. bcc's tcpdrop is TCP only, on a kprobe\n"
"of tcp_drop() (or this tracepoint where it has none). SADDR:SPORT >\n"
"DADDR:DPORT are from the packet's own headers (IPv6: ports only when\n"
"TCP or UDP follows the fixed header). STATE is the TCP state of the\n"
"packet's socket where the kernel knows it (the packet's, or the socket\n"
"that received it, 6.11+), FLAGS its TCP flags; \"-\" for none.\n"
"\n"
"What is a drop: the kernel frees a packet it is done with by\n"
"consume_skb (another tracepoint, never traced here) and one it drops by\n"
"kfree_skb with a reason (5.17+). Since 6.3 the reason SKB_CONSUMED marks\n"
"a consume and never reaches kfree_skb's tracepoint; NOT_SPECIFIED is\n"
"every kfree_skb() no one gave a reason: mostly drops, but also frees\n"
"that are none. As bcc, tcpdrop shows every reason but those two;\n"
"--unspecified adds NOT_SPECIFIED. REASON is the kernel's own name (its\n"
"enum skb_drop_reason, read from its BTF, without SKB_DROP_REASON_) and\n"
"CODE its number. Before 5.17 the tracepoint has no reason: REASON is\n"
"\"-\" and every kfree_skb() of an IP packet is shown (-v says so).\n"
"\n"
"PID and COMM are the task on the CPU: drops happen in softirq, often in\n"
"the task that sent the packet. The task filters keep the drops made\n"
"while their tasks ran.\n"
"\n"
"Examples:\n"
"  tcpdrop               # trace packet drops\n"
"  tcpdrop -K            # with kernel stacks\n"
"  tcpdrop -4            # only IPv4\n"
"  tcpdrop -j            # NDJSON\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	(void)arg;
	switch (key) {
	case 'K': env.kstack = true; break;
	case OPT_UNSPECIFIED: env.unspecified = true; break;
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
	{ "--netns-id", "tcpdrop reports every namespace's drops; filter the JSON (-j) by address" },
	{ "--pid-netns", "tcpdrop reports every namespace's drops; filter the JSON (-j) by address" },
	{ 0 },
};

static const struct tk_tool tool = {
	.name = "tcpdrop",
	.doc = doc,
	.options = options,
	.parser = parse,
	.bcc_missing = bcc_missing,
};

/* The kernel's enum skb_drop_reason: names by value. */
static char **reasons;
static int n_reasons;
static int reason_consumed = -1, reason_unspecified = -1;

static void read_reasons(void)
{
	const struct btf *btf = tk_kernel_btf();
	const struct btf_type *t;
	const struct btf_enum *e;
	int id, i;

	if (!btf)
		return;
	id = btf__find_by_name_kind(btf, "skb_drop_reason", BTF_KIND_ENUM);
	if (id <= 0)
		return;
	t = btf__type_by_id(btf, id);
	e = btf_enum(t);
	for (i = 0; i < btf_vlen(t); i++) {
		const char *name = btf__name_by_offset(btf, e[i].name_off);
		int v = e[i].val;

		if (v < 0 || v > 65535 || !name)
			continue;
		if (v >= n_reasons) {
			char **r = realloc(reasons, (v + 1) * sizeof(*r));

			if (!r)
				tk_fail("out of memory");
			memset(r + n_reasons, 0, (v + 1 - n_reasons) * sizeof(*r));
			reasons = r;
			n_reasons = v + 1;
		}
		if (!strcmp(name, "SKB_CONSUMED"))
			reason_consumed = v;
		else if (!strcmp(name, "SKB_DROP_REASON_NOT_SPECIFIED"))
			reason_unspecified = v;
		if (!strncmp(name, "SKB_DROP_REASON_", 16))
			name += 16;
		reasons[v] = strdup(name);
	}
}

static int nargs;

static const char *reason_str(int r, char *buf, size_t len)
{
	if (r < 0)
		return "-";
	if (r < n_reasons && reasons[r])
		return reasons[r];
	snprintf(buf, len, "UNKNOWN");
	return buf;
}

static const char *proto_str(int p, char *buf, size_t len)
{
	switch (p) {
	case 6: return "tcp";
	case 17: return "udp";
	case 1: return "icmp";
	case 58: return "icmp6";
	case 132: return "sctp";
	}
	snprintf(buf, len, "%d", p);
	return buf;
}

/* bcc's tcp.flags2str. */
static const char *flags_str(unsigned flags, char *buf, size_t len)
{
	static const char *const names[] = { "FIN", "SYN", "RST", "PSH", "ACK", "URG", "ECE", "CWR" };
	size_t n = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < 8; i++)
		if (flags & (1u << i))
			n += snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? "|" : "", names[i]);
	return buf;
}

static struct tk_syms *syms;

static const char *ksym(unsigned long long addr, char *buf, size_t len)
{
	if (!syms) {
		struct tk_syms_opts o = { 0 };

		syms = tk_syms_new(&o);
	}
	return tk_syms_addr_text(syms, addr, false, 0, buf, len);
}

/* The stack's frames below the tracing machinery (the BPF program, the
 * tracepoint's own functions), innermost first. */
static int stack_start(const struct tcpdrop_event *e, int n)
{
	char buf[256];
	int i;

	for (i = 0; i < n; i++) {
		ksym(e->kstack[i], buf, sizeof(buf));
		if (strncmp(buf, "bpf_prog_", 9) && strncmp(buf, "bpf_trace_run", 13) &&
		    strncmp(buf, "__bpf_trace_", 12) && strncmp(buf, "__traceiter_", 12) &&
		    strncmp(buf, "perf_trace_", 11) && strncmp(buf, "perf_tp_event", 13) &&
		    strncmp(buf, "trace_call_bpf", 14))
			break;
	}
	return i;
}

static void endpoint(const struct tcpdrop_event *e, const unsigned char *addr, int port,
		     char *buf, size_t len)
{
	char a[64];

	tk_addr_str(e->ip, addr, a, sizeof(a));
	if (e->proto == 6 || e->proto == 17)
		snprintf(buf, len, e->ip == 6 ? "[%s]:%d" : "%s:%d", a, port);
	else
		snprintf(buf, len, "%s", a);
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct tcpdrop_event *e = data;
	char src[80], dst[80], buf[256], st[16], fl[48], pr[16], sf[80];
	int n = 0, i;
	struct tk_json j;

	(void)ctx;
	if (size < offsetof(struct tcpdrop_event, kstack) || (e->ip != 4 && e->ip != 6))
		return 0;
	if (env.kstack && size >= sizeof(*e))
		n = e->kstack_len / 8;
	if (tk_opts.json) {
		tk_json_begin(&j, stdout);
		tk_json_str(&j, "type", "drop");
		tk_json_time(&j);
		tk_json_int(&j, "pid", e->pid);
		tk_json_int(&j, "tid", e->tid);
		tk_json_uint(&j, "uid", e->uid);
		tk_json_strn(&j, "comm", e->comm, strnlen(e->comm, sizeof(e->comm)));
		tk_json_int(&j, "ip", e->ip);
		tk_json_str(&j, "proto", proto_str(e->proto, pr, sizeof(pr)));
		tk_json_str(&j, "saddr", tk_addr_str(e->ip, e->saddr, buf, sizeof(buf)));
		tk_json_uint(&j, "sport", e->sport);
		tk_json_str(&j, "daddr", tk_addr_str(e->ip, e->daddr, buf, sizeof(buf)));
		tk_json_uint(&j, "dport", e->dport);
		if (e->state >= 0)
			tk_json_str(&j, "state", tk_tcp_state_name(e->state, st, sizeof(st)));
		else
			tk_json_null(&j, "state");
		if (e->proto == 6)
			tk_json_str(&j, "tcpflags", flags_str(e->tcpflags, fl, sizeof(fl)));
		else
			tk_json_null(&j, "tcpflags");
		if (e->reason >= 0) {
			tk_json_str(&j, "reason", reason_str(e->reason, buf, sizeof(buf)));
			tk_json_int(&j, "code", e->reason);
		} else {
			tk_json_null(&j, "reason");
			tk_json_null(&j, "code");
		}
		tk_json_str(&j, "location", ksym(e->location, buf, sizeof(buf)));
		if (env.kstack) {
			tk_json_arr_open(&j, "kstack");
			for (i = stack_start(e, n); i < n; i++)
				tk_json_str(&j, NULL, ksym(e->kstack[i], buf, sizeof(buf)));
			tk_json_arr_close(&j);
		}
		tk_json_end(&j);
		return 0;
	}
	endpoint(e, e->saddr, e->sport, src, sizeof(src));
	endpoint(e, e->daddr, e->dport, dst, sizeof(dst));
	if (e->proto == 6)
		snprintf(sf, sizeof(sf), "%s (%s)",
			 e->state >= 0 ? tk_tcp_state_name(e->state, st, sizeof(st)) : "-",
			 flags_str(e->tcpflags, fl, sizeof(fl)));
	else
		snprintf(sf, sizeof(sf), "-");
	printf("%-8s %-7d %-2d %-5s %-20s > %-20s %-20s ", tk_time_str(buf, sizeof(buf)), e->pid,
	       e->ip, proto_str(e->proto, pr, sizeof(pr)), src, dst, sf);
	if (e->reason >= 0)
		printf("%s (%d)\n", reason_str(e->reason, buf, sizeof(buf)), e->reason);
	else
		printf("-\n");
	if (env.kstack) {
		for (i = stack_start(e, n); i < n; i++)
			printf("\t%s\n", ksym(e->kstack[i], buf, sizeof(buf)));
		printf("\n");
	}
	return 0;
}

static int configure(void *s, void *ctx)
{
	struct tcpdrop_bpf *skel = s;

	(void)ctx;
	skel->rodata->tcpdrop_has_reason = nargs >= 3;
	skel->rodata->tcpdrop_has_rx_sk = nargs >= 4;
	skel->rodata->tcpdrop_skip1 = reason_consumed;
	skel->rodata->tcpdrop_skip2 = env.unspecified ? -1 : reason_unspecified;
	skel->rodata->tcpdrop_ip = env.ip;
	skel->rodata->tcpdrop_kstack = env.kstack;
	return 0;
}

TK_SKEL_OPS(tcpdrop_bpf);

int main(int argc, char **argv)
{
	struct tcpdrop_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	read_reasons();
	nargs = tk_tp_nargs("kfree_skb");
	if (nargs < 3 || reason_unspecified < 0)
		tk_info("skb:kfree_skb reports no drop reason on this kernel (it does since 5.17): REASON is \"-\" and every kfree_skb() of an IP packet is shown, drop or not");
	skel = tk_load(&tcpdrop_bpf_ops, configure, NULL);
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json)
		printf("%-8s %-7s %-2s %-5s %-20s > %-20s %-20s %s\n", "TIME", "PID", "IP", "PROTO",
		       "SADDR:SPORT", "DADDR:DPORT", "STATE (FLAGS)", "REASON (CODE)");
	tk_ready();
	tk_events_loop();
	tk_losses_report(skel->obj);
	tcpdrop_bpf__destroy(skel);
	if (syms)
		tk_syms_free(syms);
	return tk_exit_status();
}
