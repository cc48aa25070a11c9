/* syscalls: syscount's counting mode (sys_exit only, a per-CPU array
 * slot per syscall number), as counters by syscall name. */
#include "tracekitd.h"

#include <string.h>

#include "prom.h"
#include "syscount.h"
#include "syscount.skel.h"
#include "tracekit.h"

static int configure(void *s, void *ctx)
{
	struct syscount_bpf *sk = s;

	(void)ctx;
	/* The plain count_* programs: no filter, no latency. */
	tk_programs_off(sk->obj, "sys_exit_");
	tk_programs_off(sk->obj, "sys_enter_");
	bpf_map__set_autocreate(sk->maps.by_key, false);
	bpf_map__set_autocreate(sk->maps.start_task, false);
	bpf_map__set_autocreate(sk->maps.start_tid, false);
	return 0;
}

COLLECTOR_SKELETON(syscount_bpf, configure);

static int start(const struct config *c, char *err, size_t errlen)
{
	(void)c;
	return load_skel(err, errlen);
}

struct totals {
	struct syscount_val v[SYSCOUNT_SLOTS];
};

static void add(const void *key, const char *vals, int ncpu, size_t vsize,
		void *ctx)
{
	struct totals *t = ctx;
	unsigned slot = *(const unsigned *)key;
	int c;

	if (slot >= SYSCOUNT_SLOTS)
		return;
	for (c = 0; c < ncpu; c++) {
		const struct syscount_val *v = (const void *)(vals + c * vsize);

		t->v[slot].count += v->count;
		t->v[slot].errors += v->errors;
	}
}

static const char *name_of(unsigned slot, char *buf, unsigned len)
{
	if (slot == SYSCOUNT_OTHER)
		return "[other]";
	if (slot == SYSCOUNT_NONE)
		return "[none]";  /* id -1: rt_sigreturn, skipped calls */
	return tk_syscall_name_or_nr(tk_arch_native(), slot, buf, len);
}

static void write_metrics(FILE *f)
{
	static struct totals t;
	char buf[32];
	unsigned i;
	int err;

	memset(&t, 0, sizeof(t));
	err = tk_percpu_map_read(skel->maps.by_nr, add, &t);
	if (err) {
		tk_warn("syscalls: cannot read map by_nr: %s", strerror(-err));
		return;
	}
	tk_prom_family(f, "tracekit_syscalls_total", "counter",
		       "System calls completed, by syscall name.");
	for (i = 0; i < SYSCOUNT_SLOTS; i++)
		if (t.v[i].count)
			tk_prom_sample(f, "tracekit_syscalls_total", t.v[i].count,
				       "syscall", name_of(i, buf, sizeof(buf)), NULL);
	tk_prom_family(f, "tracekit_syscall_errors_total", "counter",
		       "System calls that returned an error (-4095..-1), by syscall name.");
	for (i = 0; i < SYSCOUNT_SLOTS; i++)
		if (t.v[i].errors)
			tk_prom_sample(f, "tracekit_syscall_errors_total", t.v[i].errors,
				       "syscall", name_of(i, buf, sizeof(buf)), NULL);
}

static void stop(void)
{
	unload_skel();
}

const struct collector collector_syscalls = {
	.name = "syscalls",
	.help = "system calls by name, and their errors (syscount)",
	.start = start,
	.write = write_metrics,
	.stop = stop,
	.object = object,
};
