/* oomkill: trace the OOM killer's victims. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "oomkill.h"
#include "oomkill.skel.h"
#include "tracekit.h"

static const char doc[] =
"Trace the OOM killer: each task it picks, with the task whose allocation\n"
"ran it, the victim's memory and its memory cgroup.\n"
"\v"
"bcc's line: \"HH:MM:SS Triggered by PID P (\\\"COMM\\\"), OOM kill of PID V\n"
"(\\\"COMM\\\"), N pages, loadavg: ...\", with the victim's memory cgroup\n"
"added before the load average. N is the victim's resident pages (file,\n"
"anon and shmem), as the kernel's OOM report counts them; bcc prints the\n"
"size of the OOM domain there instead. It runs on the tracepoint\n"
"oom:mark_victim (bcc: a kprobe on oom_kill_process). Before Linux 6.8\n"
"that tracepoint names only the victim's thread: its process, pages and\n"
"cgroup are known where it is the trigger itself (a task that filled its\n"
"own cgroup, the common case), else shown as ? (JSON null) and its name\n"
"read from /proc.\n"
"\n"
"Examples:\n"
"  oomkill                # trace OOM kills\n"
"  oomkill -j             # NDJSON\n";

static const struct tk_tool tool = {
	.name = "oomkill",
	.doc = doc,
};

/* /proc/loadavg's line, without its newline. */
static const char *loadavg(char *buf, size_t len)
{
	FILE *f = fopen("/proc/loadavg", "r");

	buf[0] = 0;
	if (f) {
		if (!fgets(buf, len, f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

/* The victim's name: the event's, else /proc/TID/comm while it lasts. */
static const char *victim_comm(const struct oom_event *e, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	if (e->victim_comm[0]) {
		snprintf(buf, len, "%.*s", (int)sizeof(e->victim_comm), e->victim_comm);
		return buf;
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", e->victim_tid);
	buf[0] = 0;
	f = fopen(path, "r");
	if (f) {
		if (!fgets(buf, len, f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
	return buf[0] ? buf : "?";
}

static void print_text(const struct oom_event *e)
{
	char ts[16], vc[32], la[128];

	printf("%s Triggered by PID %d (\"", tk_time_str(ts, sizeof(ts)), e->pid);
	tk_print_safe(stdout, e->comm, strnlen(e->comm, sizeof(e->comm)));
	printf("\"), OOM kill of PID ");
	if (e->victim_pid)
		printf("%d", e->victim_pid);
	else
		printf("? (thread %d)", e->victim_tid);
	printf(" (\"");
	victim_comm(e, vc, sizeof(vc));
	tk_print_safe(stdout, vc, strlen(vc));
	if (e->rss_pages == ~0ULL)
		printf("\"), ? pages");
	else
		printf("\"), %llu pages", e->rss_pages);
	if (e->memcg_id)
		printf(", memcg %s", tk_memcg_path(e->memcg_id, e->memcg_v2));
	printf(", loadavg: %s\n", loadavg(la, sizeof(la)));
}

static void print_json(const struct oom_event *e)
{
	char vc[32];
	struct tk_json j;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "oom_kill");
	tk_json_time(&j);
	tk_json_task(&j, e->pid, e->tid, e->uid, e->comm, sizeof(e->comm), 0);
	if (e->victim_pid)
		tk_json_int(&j, "victim_pid", e->victim_pid);
	else
		tk_json_null(&j, "victim_pid");
	tk_json_int(&j, "victim_tid", e->victim_tid);
	victim_comm(e, vc, sizeof(vc));
	if (strcmp(vc, "?"))
		tk_json_str(&j, "victim_comm", vc);
	else
		tk_json_null(&j, "victim_comm");
	if (e->rss_pages == ~0ULL)
		tk_json_null(&j, "pages");
	else
		tk_json_uint(&j, "pages", e->rss_pages);
	if (e->memcg_id)
		tk_json_str(&j, "memcg", tk_memcg_path(e->memcg_id, e->memcg_v2));
	else
		tk_json_null(&j, "memcg");
	tk_json_end(&j);
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct oom_event *e = data;

	(void)ctx;
	if (size < sizeof(*e))
		return 0;  /* malformed */
	if (tk_opts.json)
		print_json(e);
	else
		print_text(e);
	return 0;
}

static int configure(void *s, void *ctx)
{
	struct oomkill_bpf *skel = s;

	(void)ctx;
	skel->rodata->victim_is_task = tk_tp_nargs("mark_victim") >= 2;
	return 0;
}

TK_SKEL_OPS(oomkill_bpf);

int main(int argc, char **argv)
{
	struct oomkill_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	skel = tk_load(&oomkill_bpf_ops, configure, NULL);
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json)
		printf("Tracing OOM kills... Ctrl-C to stop.\n");
	tk_ready();
	tk_events_loop();
	tk_losses_report(skel->obj);
	oomkill_bpf__destroy(skel);
	return tk_exit_status();
}
