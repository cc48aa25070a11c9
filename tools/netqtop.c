/* netqtop: packets and bytes per network device and queue, sent and
 * received, with their sizes, per interval. */
#include <bpf/bpf.h>
#include <dirent.h>
#include <net/if.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "netqtop.h"
#include "netqtop.skel.h"
#include "tracekit.h"

static struct {
	const char *dev;
	bool throughput;
	int rx_queues, tx_queues;   /* with -n: the device's, from sysfs */
} env;

static const struct argp_option options[] = {
	{ "device", 'n', "DEV", 0, "Only this network device (bcc's -n NAME)", 0 },
	{ "interval", 'i', "SEC", 0, "Print every SEC seconds (default 1)", 0 },
	{ "throughput", 't', 0, 0, "BPS and PPS columns", 0 },
	{ 0 },
};

static const char doc[] =
"Packets and bytes per network device and queue, received and sent, and\n"
"their sizes, per interval (default 1 second).\n"
"\v"
"RX is each packet at net:netif_receive_skb, TX each packet handed to the\n"
"driver at net:net_dev_start_xmit (as bcc: a packet the driver refuses\n"
"busy and gets again is counted twice). A size is skb->len: on RX from\n"
"the network header (the link header is pulled by then), on TX with the\n"
"link header (14 bytes on Ethernet and veth); a GSO or GRO packet counts\n"
"once with its whole length. An RX queue is the one the driver recorded\n"
"(skb_record_rx_queue), else 0.\n"
"\n"
"With -n DEV, bcc's table: the device's every queue (from\n"
"/sys/class/net/DEV/queues), TX then RX, avg_size and how many packets\n"
"of each size. DEV is matched by name in every network namespace, as bcc\n"
"does, but must exist in this one. Without -n, every device that\n"
"passed a packet in the interval, each table headed by its name (and its\n"
"namespace when not this one). bcc's last bucket is [16K, 64K); here\n"
"[64K, inf) follows it. Counts over 1000 print as K (/1024) and M, as bcc.\n"
"JSON: one record per device, queue and direction an interval, with the\n"
"exact packets, bytes and buckets and the interval's length.\n"
"\n"
"Packets are counted at the device, mostly in softirq: the task filters\n"
"do not apply.\n"
"\n"
"Examples:\n"
"  netqtop -n eth0        # eth0's queues, every second\n"
"  netqtop -n eth0 -i 5   # every 5 seconds\n"
"  netqtop -n eth0 -t     # with BPS and PPS\n"
"  netqtop                # every device\n"
"  netqtop -j -n eth0     # NDJSON\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'n':
		if (!*arg || strlen(arg) >= NETQTOP_IFNAMSIZ || strchr(arg, '/'))
			tk_usage_error("invalid --device value '%s': expected a network device name of 1 to %d characters (ip link lists them)",
				       arg, NETQTOP_IFNAMSIZ - 1);
		env.dev = arg;
		break;
	case 'i': tk_opts.interval = tk_arg_long("--interval", arg, 1, 86400); break;
	case 't': env.throughput = true; break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "netqtop",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "n",
	.periodic = true,
};

/* The device's RX and TX queues in this namespace's sysfs; a usage error
 * when there is no such device. */
static void count_queues(const char *dev)
{
	char path[64];
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", dev);
	dir = opendir(path);
	if (!dir)
		tk_usage_error("invalid --device value '%s': no such network device (ip link lists them)",
			       dev);
	while ((d = readdir(dir))) {
		if (!strncmp(d->d_name, "rx-", 3))
			env.rx_queues++;
		else if (!strncmp(d->d_name, "tx-", 3))
			env.tx_queues++;
	}
	closedir(dir);
}

struct row {
	struct netqtop_key key;
	struct netqtop_val val;
};

/* The map holds running totals (nothing is deleted, so no packet counted
 * between a read and a delete is lost); an interval is the difference
 * from the totals the interval before. */
static struct row now_rows[NETQTOP_MAX_KEYS], then_rows[NETQTOP_MAX_KEYS];
static int n_then;
static double then_s;
static unsigned int own_netns;

/* Every entry of the counts map, without deleting it. */
static int read_all(struct bpf_map *map, struct row *out, int max)
{
	int fd = bpf_map__fd(map), n = 0, i, kept = 0;
	struct netqtop_key *prev = NULL;

	while (n < max && !bpf_map_get_next_key(fd, prev, &out[n].key)) {
		prev = &out[n].key;
		n++;
	}
	for (i = 0; i < n; i++) {
		if (bpf_map_lookup_elem(fd, &out[i].key, &out[i].val))
			continue;
		out[kept++] = out[i];
	}
	return kept;
}

static int by_key(const void *a, const void *b)
{
	const struct netqtop_key *x = a, *y = b;
	int c = strncmp(x->dev, y->dev, sizeof(x->dev));

	if (c)
		return c;
	if (x->netns != y->netns)
		return x->netns < y->netns ? -1 : 1;
	if (x->ifindex != y->ifindex)
		return x->ifindex < y->ifindex ? -1 : 1;
	if (x->tx != y->tx)
		return x->tx > y->tx ? -1 : 1;   /* TX first, as bcc */
	return x->queue < y->queue ? -1 : x->queue > y->queue;
}

/* bcc's to_str. */
static const char *num_str(double v, char *buf, size_t len)
{
	if (v > 1000000)
		snprintf(buf, len, "%gM", (double)(long long)(v / (1024 * 1024.0) * 100 + 0.5) / 100);
	else if (v > 1000)
		snprintf(buf, len, "%gK", (double)(long long)(v / 1024.0 * 100 + 0.5) / 100);
	else
		snprintf(buf, len, "%g", (double)(long long)(v * 100 + 0.5) / 100);
	return buf;
}

static void print_cells(const char *first, const struct netqtop_val *v, double secs)
{
	char buf[32];
	int i;

	printf(" %-11s", first);
	printf("%-11s", num_str(v->packets ? (double)v->bytes / v->packets : 0, buf, sizeof(buf)));
	for (i = 0; i < NETQTOP_SLOTS; i++)
		printf("%-11s", num_str(v->sizes[i], buf, sizeof(buf)));
	if (env.throughput) {
		printf("%-11s", num_str(secs > 0 ? v->bytes / secs : 0, buf, sizeof(buf)));
		printf("%-11s", num_str(secs > 0 ? v->packets / secs : 0, buf, sizeof(buf)));
	}
	printf("\n");
}

static void add(struct netqtop_val *to, const struct netqtop_val *v)
{
	int i;

	to->packets += v->packets;
	to->bytes += v->bytes;
	for (i = 0; i < NETQTOP_SLOTS; i++)
		to->sizes[i] += v->sizes[i];
}

/* One direction of one device: rows[0..n) (sorted by queue), with every
 * queue below nq shown (0 when idle). */
static void print_table(const char *title, const struct row *rows, int n, int nq, double secs)
{
	static const char *const heads[] = {
		"QueueID", "avg_size", "[0, 64)", "[64, 512)", "[512, 2K)",
		"[2K, 16K)", "[16K, 64K)", "[64K, inf)",
	};
	struct netqtop_val total = { 0 }, zero = { 0 };
	char q[16];
	int i, r = 0, last;

	printf("%s\n ", title);
	for (i = 0; i < (int)(sizeof(heads) / sizeof(*heads)); i++)
		printf("%-11s", heads[i]);
	if (env.throughput)
		printf("%-11s%-11s", "BPS", "PPS");
	printf("\n");
	last = n ? rows[n - 1].key.queue : -1;
	if (nq - 1 > last)
		last = nq - 1;
	for (i = 0; i <= last; i++) {
		const struct netqtop_val *v = &zero;

		if (r < n && rows[r].key.queue == i)
			v = &rows[r++].val;
		else if (i >= nq)
			continue;
		snprintf(q, sizeof(q), "%d", i);
		print_cells(q, v, secs);
		add(&total, v);
	}
	print_cells("Total", &total, secs);
}

static void print_json(const struct row *r, int seq, double secs)
{
	static const unsigned long long low[NETQTOP_SLOTS] = { 0, 64, 512, 2048, 16384, 65536 };
	struct tk_json j;
	int i;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "queue");
	tk_json_time(&j);
	tk_json_int(&j, "seq", seq);
	tk_json_double(&j, "interval_s", secs);
	tk_json_strn(&j, "dev", r->key.dev, strnlen(r->key.dev, sizeof(r->key.dev)));
	tk_json_uint(&j, "ifindex", r->key.ifindex);
	tk_json_uint(&j, "netns", r->key.netns);
	tk_json_str(&j, "direction", r->key.tx ? "tx" : "rx");
	tk_json_uint(&j, "queue", r->key.queue);
	tk_json_uint(&j, "packets", r->val.packets);
	tk_json_uint(&j, "bytes", r->val.bytes);
	tk_json_arr_open(&j, "sizes");
	for (i = 0; i < NETQTOP_SLOTS; i++) {
		tk_json_obj_open(&j, NULL);
		tk_json_uint(&j, "low", low[i]);
		if (i + 1 < NETQTOP_SLOTS)
			tk_json_uint(&j, "high", low[i + 1] - 1);
		else
			tk_json_null(&j, "high");
		tk_json_uint(&j, "count", r->val.sizes[i]);
		tk_json_obj_close(&j);
	}
	tk_json_arr_close(&j);
	tk_json_str(&j, "unit", "bytes");
	tk_json_end(&j);
}

/* now minus then, for each key of now; rows whose difference is nothing
 * are dropped. Returns how many are left in now_rows. */
static int deltas(int n)
{
	int i, k = 0, s;

	for (i = 0; i < n; i++) {
		struct row *r = &now_rows[i];
		const struct row *p = bsearch(r, then_rows, n_then, sizeof(*r), by_key);
		struct row d = *r;

		if (p) {
			d.val.packets -= p->val.packets;
			d.val.bytes -= p->val.bytes;
			for (s = 0; s < NETQTOP_SLOTS; s++)
				d.val.sizes[s] -= p->val.sizes[s];
		}
		/* the totals, for the next interval */
		then_rows[i] = *r;
		if (d.val.packets)
			now_rows[k++] = d;
	}
	n_then = n;
	return k;
}

static void print_interval(void *arg, int seq)
{
	struct netqtop_bpf *skel = arg;
	char buf[64], title[64];
	double now_s = tk_elapsed(), secs = now_s - then_s;
	int n, i, j, tx;
	time_t t;

	n = read_all(skel->maps.counts, now_rows, NETQTOP_MAX_KEYS);
	qsort(now_rows, n, sizeof(now_rows[0]), by_key);
	n = deltas(n);
	then_s = now_s;
	if (tk_opts.json) {
		if (env.dev) {
			/* every queue of the device, idle ones too, as the table */
			for (tx = 1; tx >= 0; tx--) {
				int nq = tx ? env.tx_queues : env.rx_queues;

				for (i = 0; i < nq; i++) {
					struct row z = { 0 };

					for (j = 0; j < n; j++)
						if (now_rows[j].key.tx == tx && now_rows[j].key.queue == i)
							break;
					if (j < n)
						continue;
					strncpy(z.key.dev, env.dev, sizeof(z.key.dev) - 1);
					z.key.ifindex = if_nametoindex(env.dev);
					z.key.netns = own_netns;
					z.key.tx = tx;
					z.key.queue = i;
					print_json(&z, seq, secs);
				}
			}
		}
		for (i = 0; i < n; i++)
			print_json(&now_rows[i], seq, secs);
		fflush(stdout);
		return;
	}
	t = time(NULL);
	strftime(buf, sizeof(buf), "%a %b %e %H:%M:%S %Y", localtime(&t));
	printf("%s\n", buf);
	if (env.dev) {
		for (tx = 1; tx >= 0; tx--) {
			for (i = 0; i < n && now_rows[i].key.tx != tx; i++)
				;
			for (j = i; j < n && now_rows[j].key.tx == tx; j++)
				;
			if (!tx)
				printf("\n");
			print_table(tx ? "TX" : "RX", now_rows + i, j - i,
				    tx ? env.tx_queues : env.rx_queues, secs);
		}
	} else {
		/* each device (name, namespace, index), TX then RX */
		for (i = 0; i < n; i = j) {
			for (j = i; j < n && now_rows[j].key.tx == now_rows[i].key.tx &&
				    !strncmp(now_rows[j].key.dev, now_rows[i].key.dev, NETQTOP_IFNAMSIZ) &&
				    now_rows[j].key.netns == now_rows[i].key.netns &&
				    now_rows[j].key.ifindex == now_rows[i].key.ifindex; j++)
				;
			if (now_rows[i].key.netns == own_netns)
				snprintf(title, sizeof(title), "%.16s %s", now_rows[i].key.dev,
					 now_rows[i].key.tx ? "TX" : "RX");
			else
				snprintf(title, sizeof(title), "%.16s (netns %u) %s",
					 now_rows[i].key.dev, now_rows[i].key.netns,
					 now_rows[i].key.tx ? "TX" : "RX");
			if (i)
				printf("\n");
			print_table(title, now_rows + i, j - i, 0, secs);
		}
	}
	for (i = 0; i < (env.throughput ? 110 : 88); i++)
		putchar('-');
	printf("\n");
	fflush(stdout);
}

static int configure(void *s, void *ctx)
{
	struct netqtop_bpf *skel = s;

	(void)ctx;
	if (env.dev)
		strncpy((char *)skel->rodata->netqtop_dev, env.dev, NETQTOP_IFNAMSIZ - 1);
	return 0;
}

TK_SKEL_OPS(netqtop_bpf);

int main(int argc, char **argv)
{
	struct netqtop_bpf *skel;
	struct stat st;

	tk_parse_args(&tool, argc, argv);
	if (tk_filter_any())
		tk_usage_error("netqtop counts per network device: the task filters (-p, --tid, -u, -c, --name, --ppid, -- COMMAND) do not apply");
	if (env.dev)
		count_queues(env.dev);
	if (!stat("/proc/self/ns/net", &st))
		own_netns = st.st_ino;
	if (!tk_opts.interval)
		tk_opts.interval = 1;   /* bcc's default */
	tk_init();
	skel = tk_load(&netqtop_bpf_ops, configure, NULL);
	tk_ready();
	then_s = 0;  /* when tracing began: see vfsstat */
	tk_print_intervals(print_interval, skel);
	tk_losses_report(skel->obj);
	netqtop_bpf__destroy(skel);
	return tk_exit_status();
}
