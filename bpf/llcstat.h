/* llcstat: last-level cache references and misses, shared by BPF and
 * userspace. */
#ifndef LLCSTAT_H
#define LLCSTAT_H

#define LLCSTAT_MAX_KEYS 10240

struct llcstat_key {
	unsigned int cpu;
	unsigned int pid;   /* tgid */
	unsigned int tid;   /* the tgid again without -t */
};

struct llcstat_val {
	unsigned long long ref;
	unsigned long long miss;
	char comm[16];
};

#endif
