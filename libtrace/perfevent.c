/* Perf events as BPF program triggers (profile's sampling clock). */
#include "perfevent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "opts.h"
#include "setup.h"

static struct perf_event_attr the_attr;
static bool *cpu_set;   /* NULL: every online CPU */
static int n_cpus;
static const char *description = "";

/* tk_set_perf_event_prog's: programs with an event of their own. */
#define MAX_OWN_EVENTS 4
static struct {
	const char *prog;
	struct perf_event_attr attr;
	const char *describe;
} own[MAX_OWN_EVENTS];
static int n_own;

static int own_event(const struct bpf_program *prog)
{
	for (int i = 0; i < n_own; i++)
		if (!strcmp(own[i].prog, bpf_program__name(prog)))
			return i;
	return -1;
}

void tk_set_perf_event_prog(const char *prog, const struct perf_event_attr *attr,
			    const char *describe)
{
	if (n_own == MAX_OWN_EVENTS)
		tk_fail("too many perf events of their own (at most %d)", MAX_OWN_EVENTS);
	own[n_own].prog = prog;
	own[n_own].attr = *attr;
	own[n_own].attr.size = sizeof(own[n_own].attr);
	own[n_own++].describe = describe;
}

void tk_perf_event_describe_prog(const struct bpf_program *prog, char *buf,
				 size_t size)
{
	int i = own_event(prog);

	snprintf(buf, size, "%s", i < 0 ? description : own[i].describe);
}

int tk_parse_cpu_list(const char *list, bool *set, int n)
{
	const char *p = list;
	char *end;

	memset(set, 0, n * sizeof(*set));
	if (!*p)
		return -EINVAL;
	while (*p) {
		long a, b;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		a = strtol(p, &end, 10);
		b = a;
		if (*end == '-') {
			if (end[1] < '0' || end[1] > '9')
				return -EINVAL;
			b = strtol(end + 1, &end, 10);
		}
		if (a > b || b >= n)
			return -EINVAL;
		while (a <= b)
			set[a++] = true;
		if (*end == ',' && end[1])
			end++;
		else if (*end)
			return -EINVAL;
		p = end;
	}
	return 0;
}

/* The online CPUs, from sysfs (a list like "0-1"). */
static bool *online_cpus(void)
{
	char buf[4096] = "";
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	bool *set = calloc(n_cpus, sizeof(*set));

	if (!set)
		tk_fail("out of memory");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
	if (!*buf || tk_parse_cpu_list(buf, set, n_cpus))
		for (int i = 0; i < n_cpus; i++)
			set[i] = true;
	return set;
}

void tk_set_perf_event(const struct perf_event_attr *attr, const char *cpus,
		       const char *describe)
{
	the_attr = *attr;
	the_attr.size = sizeof(the_attr);
	description = describe;
	n_cpus = libbpf_num_possible_cpus();
	if (n_cpus <= 0)
		tk_fail("cannot count the CPUs: %s", strerror(-n_cpus));
	if (!cpus)
		return;
	cpu_set = calloc(n_cpus, sizeof(*cpu_set));
	if (!cpu_set)
		tk_fail("out of memory");
	if (tk_parse_cpu_list(cpus, cpu_set, n_cpus))
		tk_usage_error("invalid CPU list '%s': give CPUs 0-%d as a list such as 0,2-3",
			       cpus, n_cpus - 1);
}

void tk_set_perf_event_hz(long hz, const char *cpus)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = hz,
	};
	static char describe[64];

	snprintf(describe, sizeof(describe), "cpu-clock %ld Hz", hz);
	tk_set_perf_event(&attr, cpus, describe);
}

long tk_perf_max_sample_rate(void)
{
	long rate = tk_read_sysctl("/proc/sys/kernel/perf_event_max_sample_rate", 0);

	return rate > 0 ? rate : 100000;
}

void tk_perf_event_describe(char *buf, size_t size)
{
	snprintf(buf, size, "%s", description);
}

static const char *open_hint(int err)
{
	switch (err) {
	case ENOENT:
	case EOPNOTSUPP:
		return "; this kernel or its hypervisor does not provide that event";
	case EACCES:
	case EPERM:
		return "; run as root, or lower kernel.perf_event_paranoid";
	case EMFILE:
		return "; raise the open-file limit (ulimit -n)";
	default:
		return "";
	}
}

void tk_perf_event_attach(struct bpf_program *prog,
			  void (*add)(struct bpf_link *link))
{
	bool *set = cpu_set ? cpu_set : online_cpus();
	int cpu, attached = 0, o = own_event(prog);
	const struct perf_event_attr *attr = o < 0 ? &the_attr : &own[o].attr;
	const char *desc = o < 0 ? description : own[o].describe;

	if (!n_cpus)
		tk_fail("perf_event program %s has no event (tk_set_perf_event)",
			bpf_program__name(prog));
	for (cpu = 0; cpu < n_cpus; cpu++) {
		struct bpf_link *link;
		int fd;

		if (!set[cpu])
			continue;
		fd = syscall(SYS_perf_event_open, attr, -1, cpu, -1,
			     PERF_FLAG_FD_CLOEXEC);
		if (fd < 0 && errno == ENODEV && !cpu_set)
			continue;  /* went offline since we looked */
		if (fd < 0)
			tk_fail("cannot open perf event %s on CPU %d: %s%s",
				desc, cpu, strerror(errno),
				errno == ENODEV ? "; that CPU is offline" :
				open_hint(errno));
		link = bpf_program__attach_perf_event(prog, fd);
		if (!link) {
			int err = errno;

			close(fd);
			tk_fail("cannot attach %s to perf event %s on CPU %d: %s",
				bpf_program__name(prog), desc, cpu,
				strerror(err));
		}
		add(link);
		attached++;
	}
	if (set != cpu_set)
		free(set);
	if (!attached)
		tk_fail("no online CPU to sample");
}
