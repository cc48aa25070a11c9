/* BPF programs run by perf events (SEC("perf_event")): one event per
 * CPU, opened and attached by tk_load, as profile samples CPUs. */
#ifndef TK_PERFEVENT_H
#define TK_PERFEVENT_H

#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>

/* Before tk_load: the event every perf_event program of the tool is
 * attached to, on each CPU of cpus (a list such as "0-3,6"; NULL: every
 * online CPU), and how to describe it ("cpu-clock 49 Hz"). cpus is
 * checked here: a usage error (exit 2) names the bad part. */
void tk_set_perf_event(const struct perf_event_attr *attr, const char *cpus,
		       const char *describe);

/* tk_set_perf_event with a cpu-clock event sampling hz times a second,
 * described "cpu-clock HZ Hz" (runqlen, cpufreq). */
void tk_set_perf_event_hz(long hz, const char *cpus);

/* The highest sampling frequency the kernel takes (the
 * kernel.perf_event_max_sample_rate sysctl; 100000 when unreadable): the
 * bound of -F/-f. */
long tk_perf_max_sample_rate(void);

/* Before tk_load, after tk_set_perf_event: the perf_event program named
 * prog runs on its own event (llcstat's cache misses beside its cache
 * references), described so. At most 4 such programs. */
void tk_set_perf_event_prog(const char *prog, const struct perf_event_attr *attr,
			    const char *describe);

/* Parse a CPU list ("0-3,6") into set[0..n): 0, or -EINVAL with a CPU
 * beyond n-1 or bad syntax. */
int tk_parse_cpu_list(const char *list, bool *set, int n);

/* For tk_load: open the event on each chosen CPU and attach prog, handing
 * each link to add. Exits 1 with one line when the kernel refuses. */
void tk_perf_event_attach(struct bpf_program *prog,
			  void (*add)(struct bpf_link *link));

/* The description given to tk_set_perf_event. */
void tk_perf_event_describe(char *buf, size_t size);
/* prog's: tk_set_perf_event_prog's, or else tk_set_perf_event's. */
void tk_perf_event_describe_prog(const struct bpf_program *prog, char *buf,
				 size_t size);

#endif
