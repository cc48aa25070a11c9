/* drsnoop: trace the memory reclaim tasks do themselves, with latency. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "drsnoop.h"
#include "drsnoop.skel.h"
#include "symparse.h"
#include "tracekit.h"

static struct {
	bool timestamp;      /* -T */
	bool print_uid;      /* -U */
	bool free_kb;        /* -v */
	bool direct_only;    /* --direct */
	unsigned long long first_ns;
	unsigned long long free_addr;
	long page_kb;
} env;

enum { K_DIRECT = 0x2000 };

static const struct argp_option options[] = {
	{ "timestamp", 'T', 0, 0, "TIME(s) column: seconds since the first reclaim shown", 0 },
	{ "print-uid", 'U', 0, 0, "UID column", 0 },
	{ "free", 'v', 0, 0, "FREE(KB) column: free memory when the reclaim ended (bcc's -v)", 0 },
	{ "direct", K_DIRECT, 0, 0, "Only direct reclaim (the system short of memory), as bcc", 0 },
	{ 0 },
};

/* Each kind's tracepoints, mm_vmscan_<name>_begin and _end, and its
 * JSON name. */
static const struct {
	const char *tp, *name;
} kinds[DR_KINDS] = {
	[DR_DIRECT] = { "direct_reclaim", "direct" },
	[DR_MEMCG] = { "memcg_reclaim", "memcg" },
	[DR_MEMCG_SOFTLIMIT] = { "memcg_softlimit_reclaim", "memcg_softlimit" },
};

static const char doc[] =
"Trace the memory reclaim tasks do in their own allocations, with its\n"
"latency and the pages reclaimed: direct reclaim (the system short of\n"
"memory) and a memory cgroup's reclaim at its limit or memory.high.\n"
"\v"
"bcc's columns: COMM, PID, LAT(ms), PAGES (reclaimed); -T TIME(s), -U\n"
"UID, -v FREE(KB). bcc sees direct reclaim only (--direct does the\n"
"same); a task held at its cgroup's memory.max or memory.high reclaims\n"
"through the memcg tracepoints, which tracekit adds (JSON \"kind\":\n"
"direct, memcg or memcg_softlimit). Tracepoints vmscan:mm_vmscan_*_begin\n"
"and _end; JSON adds the tid, uid, the allocation's order and times in\n"
"ns.\n"
"\n"
"Examples:\n"
"  drsnoop                # trace reclaim by tasks\n"
"  drsnoop -T -v          # with timestamps and free memory\n"
"  drsnoop --direct       # only the system-wide kind, as bcc\n"
"  drsnoop -j -- ./build  # NDJSON, of one command\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)arg;
	(void)state;
	switch (key) {
	case 'T': env.timestamp = true; break;
	case 'U': env.print_uid = true; break;
	case 'v': env.free_kb = true; break;
	case K_DIRECT: env.direct_only = true; break;
	default: return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "drsnoop",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "Tv",
};

/* -v: the address of vm_zone_stat (the BPF side indexes it by the
 * kernel's own NR_FREE_PAGES), from /proc/kallsyms; 0 where it cannot be
 * read (kptr_restrict) or is not listed. */
static unsigned long long zone_stat_addr(void)
{
	char line[512];
	unsigned long long addr = 0;
	FILE *f = fopen("/proc/kallsyms", "r");
	struct tk_ksym_line k;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!tk_parse_kallsyms_line(line, strlen(line), &k) && !k.mod &&
		    k.name_len == 12 && !memcmp(k.name, "vm_zone_stat", 12)) {
			addr = k.addr;
			break;
		}
	fclose(f);
	return addr;
}

static void print_header(void)
{
	if (tk_opts.time)
		printf("%-8s ", "TIME");
	if (env.timestamp)
		printf("%-14s", "TIME(s)");
	if (env.print_uid)
		printf("%-6s", "UID");
	printf("%-14s %-6s %8s %5s", "COMM", "PID", "LAT(ms)", "PAGES");
	if (env.free_kb)
		printf(" %10s", "FREE(KB)");
	if (tk_opts.filter.cgroup_ids)
		printf(" %s", TK_CGROUP_HEADER);
	putchar('\n');
}

static void print_text(const struct dr_event *e)
{
	char buf[16];

	if (tk_opts.time)
		printf("%-8s ", tk_time_str(buf, sizeof(buf)));
	if (env.timestamp)
		printf("%-14.9f", (e->ts_ns - env.first_ns) / 1e9);
	if (env.print_uid)
		printf("%-6d", e->uid);
	tk_print_safe_padded(stdout, e->comm, strnlen(e->comm, 14), 14);
	printf(" %-6d %8.2f %5llu", e->pid, e->lat_ns / 1e6, e->nr_reclaimed);
	if (env.free_kb)
		printf(" %10llu", e->free_pages * env.page_kb);
	if (tk_opts.filter.cgroup_ids) {
		putchar(' ');
		tk_print_cgroup(stdout, e->cgroup_id, 0);
	}
	putchar('\n');
}

static void print_json(const struct dr_event *e)
{
	struct tk_json j;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "reclaim");
	tk_json_time(&j);
	tk_json_task(&j, e->pid, e->tid, e->uid, e->comm, sizeof(e->comm), e->cgroup_id);
	tk_json_str(&j, "kind", kinds[e->kind].name);
	tk_json_int(&j, "order", e->order);
	tk_json_uint(&j, "lat_ns", e->lat_ns);
	tk_json_uint(&j, "pages", e->nr_reclaimed);
	if (env.free_kb)
		tk_json_uint(&j, "free_kb", e->free_pages * env.page_kb);
	tk_json_end(&j);
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct dr_event *e = data;

	(void)ctx;
	if (size < sizeof(*e) || e->kind >= DR_KINDS)
		return 0;  /* malformed */
	if (!env.first_ns)
		env.first_ns = e->ts_ns;
	if (tk_opts.json)
		print_json(e);
	else
		print_text(e);
	return 0;
}

static int configure(void *s, void *ctx)
{
	struct drsnoop_bpf *skel = s;
	char name[96];
	int k;

	(void)ctx;
	skel->rodata->zone_stat_addr = env.free_addr;
	for (k = 0; k < DR_KINDS; k++) {
		snprintf(name, sizeof(name), "mm_vmscan_%s_begin", kinds[k].tp);
		if (env.direct_only && k != DR_DIRECT) {
			snprintf(name, sizeof(name), "%s_", kinds[k].tp);
			tk_programs_off(skel->obj, name);
		} else if (tk_tp_nargs(name) < 0) {
			tk_info("vmscan:%s: not in this kernel; its reclaim is not traced", name);
			snprintf(name, sizeof(name), "%s_", kinds[k].tp);
			tk_programs_off(skel->obj, name);
		}
	}
	return 0;
}

TK_SKEL_OPS(drsnoop_bpf);

int main(int argc, char **argv)
{
	struct drsnoop_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	env.page_kb = sysconf(_SC_PAGESIZE) / 1024;
	if (env.free_kb && !(env.free_addr = zone_stat_addr()))
		tk_fail("-v: cannot find vm_zone_stat in /proc/kallsyms (kptr_restrict hides kernel addresses, or CONFIG_KALLSYMS_ALL is off)");
	skel = tk_load(&drsnoop_bpf_ops, configure, NULL);
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json)
		print_header();
	tk_ready();
	tk_events_loop();
	tk_losses_report(skel->obj);
	drsnoop_bpf__destroy(skel);
	return tk_exit_status();
}
