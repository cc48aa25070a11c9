/* tcpsynbl: SYN backlog size histograms per listening port. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "tcpsynbl.h"
#include "tcpsynbl.skel.h"
#include "tracekit.h"

static struct {
	struct tk_sock_opts sock;   /* -4/-6 */
} env;

static const struct argp_option options[] = {
	{ "ipv4", '4', 0, 0, "Only IPv4 listeners", 0 },
	{ "ipv6", '6', 0, 0, "Only IPv6 listeners", 0 },
	{ 0 },
};

static const char doc[] =
"Show the TCP SYN backlog: a histogram of a listener's accept backlog\n"
"each time a handshake completes, per listening port.\n"
"\v"
"Each time the last ACK of a handshake makes a new socket, the number of\n"
"connections waiting in its listener's accept queue (not yet accepted:\n"
"sk_ack_backlog) is counted, in a log2 histogram per listener: its port,\n"
"backlog_max (its listen() backlog, as the kernel capped it) and, when\n"
"not the tool's own, its network namespace (its inode). A handshake that\n"
"finds the queue full (backlog_max + 1 waiting) makes no socket and is\n"
"not counted (bcc counts it). -4/-6: the listener's family (an IPv6\n"
"listener's IPv4 connections count as IPv6). Handshakes complete in\n"
"softirq, in no process: the task filters do not apply.\n"
"\n"
"It traces the tracepoint sock:inet_sock_set_state (the new socket's\n"
"change to SYN_RECV, as a copy of its listener), so it needs neither\n"
"kprobes nor fentry; bcc traces tcp_v4_syn_recv_sock and\n"
"tcp_v6_syn_recv_sock with kprobes. With an interval, each histogram\n"
"covers that interval.\n"
"\n"
"Examples:\n"
"  tcpsynbl            # histograms at Ctrl-C\n"
"  tcpsynbl -T 1 10    # every second, 10 times, with the time\n"
"  tcpsynbl -4         # IPv4 listeners only\n"
"  tcpsynbl -j         # NDJSON, one object per listener\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	return tk_sock_opts_parse(&env.sock, key, arg) ? 0 : ARGP_ERR_UNKNOWN;
}

static const struct tk_tool tool = {
	.name = "tcpsynbl",
	.doc = doc,
	.options = options,
	.parser = parse,
	.periodic = true,
};

struct entry {
	struct tcpsynbl_key key;
	struct tcpsynbl_hist h;
};

static unsigned int own_netns;

static int by_key(const void *a, const void *b)
{
	const struct tcpsynbl_key *x = &((const struct entry *)a)->key;
	const struct tcpsynbl_key *y = &((const struct entry *)b)->key;

	if (x->netns != y->netns)
		return x->netns == own_netns ? -1 : y->netns == own_netns ? 1 :
		       x->netns < y->netns ? -1 : 1;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	if (x->ip != y->ip)
		return x->ip < y->ip ? -1 : 1;
	return x->backlog_max < y->backlog_max ? -1 : x->backlog_max > y->backlog_max;
}

static void print_one(const struct entry *e)
{
	struct tk_json j;

	if (tk_opts.json) {
		tk_json_begin(&j, stdout);
		tk_json_str(&j, "type", "histogram");
		tk_json_time(&j);
		tk_json_uint(&j, "port", e->key.port);
		tk_json_int(&j, "ip", e->key.ip);
		tk_json_uint(&j, "backlog_max", e->key.backlog_max);
		tk_json_uint(&j, "netns", e->key.netns);
		tk_hist_json_log2(&j, e->h.slots, TCPSYNBL_SLOTS, "backlog");
		tk_json_end(&j);
		return;
	}
	/* bcc: "backlog_max = N" over each histogram */
	printf("\nbacklog_max = %u, port = %u", e->key.backlog_max, e->key.port);
	if (e->key.netns != own_netns)
		printf(", netns = %u", e->key.netns);
	putchar('\n');
	tk_hist_print_log2(stdout, e->h.slots, TCPSYNBL_SLOTS, "backlog");
}

static void print_interval(void *arg, int seq)
{
	static struct entry entries[TCPSYNBL_MAX_KEYS];
	struct tcpsynbl_bpf *skel = arg;
	char buf[16];
	int n, i;

	(void)seq;
	n = tk_map_take_all(skel->maps.hists, entries, sizeof(entries[0]),
			    offsetof(struct entry, h), TCPSYNBL_MAX_KEYS);
	qsort(entries, n, sizeof(entries[0]), by_key);
	if (!tk_opts.json && tk_opts.time)
		printf("\n%-8s\n", tk_time_str(buf, sizeof(buf)));
	for (i = 0; i < n; i++)
		print_one(&entries[i]);
	fflush(stdout);
}

static int configure(void *s, void *ctx)
{
	(void)ctx;
	return tk_sock_opts_apply(&env.sock, ((struct tcpsynbl_bpf *)s)->obj);
}

TK_SKEL_OPS(tcpsynbl_bpf);

int main(int argc, char **argv)
{
	struct tcpsynbl_bpf *skel;
	struct stat st;

	tk_parse_args(&tool, argc, argv);
	if (tk_filter_any())
		tk_usage_error("tcpsynbl counts per listener, in softirq: the task filters (-p, --tid, -u, -c, --name, --ppid, -- COMMAND) do not apply");
	if (!stat("/proc/self/ns/net", &st))
		own_netns = st.st_ino;
	tk_init();
	skel = tk_load(&tcpsynbl_bpf_ops, configure, NULL);
	if (!tk_opts.json)
		printf("Tracing SYN backlog size. Ctrl-C to end.\n");
	tk_ready();
	tk_print_intervals(print_interval, skel);
	tk_losses_report(skel->obj);
	tcpsynbl_bpf__destroy(skel);
	return tk_exit_status();
}
