/* biostacks: block I/O latency with the kernel stack that made it. */
#include <bpf/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "biostacks.h"
#include "biostacks.skel.h"
#include "symbolize.h"
#include "tracekit.h"

static struct {
	bool millis;
	unsigned int dev;
} env;

static const struct argp_option options[] = {
	{ "milliseconds", 'm', 0, 0, "Millisecond histogram", 0 },
	{ "disk", 'd', "DISK", 0, "Only this disk (sda, loop0, ...)", 0 },
	{ 0 },
};

static const char doc[] =
"Block I/O latency histograms per process, disk and the kernel stack that\n"
"made the request.\n"
"\v"
"The stack is taken where the request is made (block:block_getrq, in the\n"
"submitting task), the latency from the request's making (the kernel's\n"
"stamp, else its issue) to its completion, as libbpf-tools' biostacks\n"
"(which takes the stack at blk_account_io_start). A request the kernel\n"
"made itself (a flush) is shown as '?' without a stack. Printed at exit:\n"
"the comm, PID and disk, the stack innermost first, the histogram.\n"
"\n"
"bcc's letters: -d is --disk here; the common -d SEC is --duration\n"
"(libbpf-tools' positional duration).\n"
"\n"
"Examples:\n"
"  biostacks              # trace block I/O with their stacks until Ctrl-C\n"
"  biostacks --duration 10 -m  # 10 seconds, millisecond histograms\n"
"  biostacks -d sdc       # only disk sdc\n"
"  biostacks -p 185       # only I/O made by PID 185\n"
"  biostacks -j | jq .stack  # NDJSON\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'm': env.millis = true; break;
	case 'd': env.dev = tk_disk_arg("--disk", arg); break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "biostacks",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "d",
};

struct entry {
	struct biostacks_key key;
	struct biostacks_hist h;
};

static int by_key(const void *a, const void *b)
{
	const struct biostacks_key *x = &((const struct entry *)a)->key;
	const struct biostacks_key *y = &((const struct entry *)b)->key;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->kstack < y->kstack ? -1 : x->kstack > y->kstack;
}

/* The frames of stack id (innermost first) into names; their number. */
static int frames(struct tk_syms *syms, int stacks_fd, int id,
		  char names[][128], int max)
{
	unsigned long long ips[TK_BLOCK_STACK_DEPTH] = { 0 };
	struct tk_sym sym;
	int n = 0, i;

	if (id < 0 || bpf_map_lookup_elem(stacks_fd, &id, ips))
		return 0;
	for (i = 0; i < TK_BLOCK_STACK_DEPTH && n < max && ips[i]; i++) {
		if (tk_syms_kernel(syms, ips[i], &sym) != 1)
			sym.name = NULL, sym.module = NULL;
		/* the tracing machinery above the tracepoint: not the caller's */
		if (!n && sym.name && (!strncmp(sym.name, "bpf_prog_", 9) ||
				       !strncmp(sym.name, "bpf_trace_run", 13) ||
				       !strncmp(sym.name, "__bpf_trace_", 12)))
			continue;
		tk_sym_format(&sym, names[n++], sizeof(names[0]));
	}
	return n;
}

static void print_entry(const struct entry *e, char names[][128], int n)
{
	const char *unit = env.millis ? "msecs" : "usecs";
	const char *disk = tk_disk_name(e->key.dev);
	size_t clen = strnlen(e->key.comm, sizeof(e->key.comm));
	struct tk_json j;
	int i;

	if (tk_opts.json) {
		tk_json_begin(&j, stdout);
		tk_json_str(&j, "type", "histogram");
		tk_json_uint(&j, "pid", e->key.pid);
		tk_json_strn(&j, "comm", e->key.comm, clen);
		tk_json_str(&j, "disk", disk);
		tk_json_arr_open(&j, "stack");
		for (i = 0; i < n; i++)
			tk_json_str(&j, NULL, names[i]);
		tk_json_arr_close(&j);
		tk_hist_json_log2(&j, e->h.slots, BIOSTACKS_SLOTS, unit);
		tk_json_end(&j);
		return;
	}
	tk_print_safe_padded(stdout, e->key.comm, clen < 14 ? clen : 14, 14);
	printf(" %-6u %-7s\n", e->key.pid, disk);
	for (i = 0; i < n; i++)
		printf("%s\n", names[i]);
	tk_hist_print_log2(stdout, e->h.slots, BIOSTACKS_SLOTS, unit);
	putchar('\n');
}

static void print_all(struct biostacks_bpf *skel)
{
	static struct entry entries[BIOSTACKS_MAX_KEYS];
	static char names[TK_BLOCK_STACK_DEPTH][128];
	int fd = bpf_map__fd(skel->maps.hists), n = 0, i;
	int stacks_fd = bpf_map__fd(skel->maps.tk_block_stacks);
	struct biostacks_key *prev = NULL;
	struct tk_syms *syms = tk_syms_new(&(struct tk_syms_opts){ 0 });

	if (!syms)
		tk_fail("out of memory");
	while (n < BIOSTACKS_MAX_KEYS && !bpf_map_get_next_key(fd, prev, &entries[n].key)) {
		prev = &entries[n].key;
		n++;
	}
	for (i = 0; i < n; i++)
		if (bpf_map_lookup_elem(fd, &entries[i].key, &entries[i].h))
			memset(&entries[i].h, 0, sizeof(entries[i].h));
	qsort(entries, n, sizeof(entries[0]), by_key);
	for (i = 0; i < n; i++)
		print_entry(&entries[i], names,
			    frames(syms, stacks_fd, entries[i].key.kstack, names,
				   TK_BLOCK_STACK_DEPTH));
	tk_syms_free(syms);
	fflush(stdout);
}

static int configure(void *s, void *ctx)
{
	struct biostacks_bpf *skel = s;

	(void)ctx;
	skel->rodata->millis = env.millis;
	return tk_block_configure(skel->obj, env.dev, true);
}

TK_SKEL_OPS(biostacks_bpf);

int main(int argc, char **argv)
{
	struct biostacks_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	skel = tk_load(&biostacks_bpf_ops, configure, NULL);
	tk_ready();
	tk_sleep_until(-1);   /* until --duration or a signal */
	print_all(skel);
	tk_losses_report(skel->obj);
	biostacks_bpf__destroy(skel);
	return tk_exit_status();
}
