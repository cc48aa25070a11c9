/* hardirqs and softirqs: the running totals per interrupt, shared by BPF
 * (bpf/tk_irq.bpf.h) and userspace (libtrace/irqstat.h). */
#ifndef TK_IRQ_H
#define TK_IRQ_H

/* log2 buckets of -d (tk_log2_slot of usecs, or nsecs with -N); the last
 * also holds everything above it. */
#define TK_IRQ_SLOTS 32
/* A hard interrupt's name (irqaction.name), cut to this length as bcc
 * cuts it; and the longest key of the map of totals. */
#define TK_IRQ_NAME_LEN 32
/* Softirq vectors: NR_SOFTIRQS of include/linux/interrupt.h (HI_SOFTIRQ
 * .. RCU_SOFTIRQ), the same from 5.x to 6.18; softirqs' map is an array
 * indexed by vector. */
#define TK_NR_SOFTIRQS 10

/* One interrupt's totals on one CPU since the tool started (per-CPU
 * hash by action for hardirqs, per-CPU array by vector for softirqs): runs (-C: every run; else the runs timed), their time, and
 * with -d their histogram. Userspace takes differences per interval. */
struct tk_irq_val {
	unsigned long long count;
	unsigned long long total_ns;
	unsigned long long slots[TK_IRQ_SLOTS];
};

#endif
