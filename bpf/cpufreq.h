/* cpufreq: CPU frequency sample histograms, shared by BPF and userspace. */
#ifndef CPUFREQ_H
#define CPUFREQ_H

/* Linear buckets of CPUFREQ_STEP MHz from 0, as bcc (0-5000 MHz); the
 * last one also holds everything above it. */
#define CPUFREQ_STEP 200
#define CPUFREQ_SLOTS 26
#define CPUFREQ_MAX_CPUS 1024
#define CPUFREQ_MAX_COMMS 1024

/* One per CPU (a per-CPU array): each CPU's samples. */
struct cpufreq_slots {
	unsigned long long slots[CPUFREQ_SLOTS];
};

/* -P: samples by the sampled task's comm, as bcc. */
struct cpufreq_comm {
	char comm[16];
};

#endif
