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
	int cpu, attached = 0;

	if (!n_cpus)
		tk_fail("perf_event program %s has no event (tk_set_perf_event)",
			bpf_program__name(prog));
	for (cpu = 0; cpu < n_cpus; cpu++) {
		struct bpf_link *link;
		int fd;

		if (!set[cpu])
			continue;
		fd = syscall(SYS_perf_event_open, &the_attr, -1, cpu, -1,
			     PERF_FLAG_FD_CLOEXEC);
		if (fd < 0 && errno == ENODEV && !cpu_set)
			continue;  /* went offline since we looked */
		if (fd < 0)
			tk_fail("cannot open perf event %s on CPU %d: %s%s",
				description, cpu, strerror(errno),
				errno == ENODEV ? "; that CPU is offline" :
				open_hint(errno));
		link = bpf_program__attach_perf_event(prog, fd);
		if (!link) {
			int err = errno;

			close(fd);
			tk_fail("cannot attach %s to perf event %s on CPU %d: %s",
				bpf_program__name(prog), description, cpu,
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
