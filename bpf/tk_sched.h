/* Userspace side of tk_sched.bpf.h (the scheduler tools' time per task). */
#ifndef TK_SCHED_H
#define TK_SCHED_H

/* In a skeleton's configure: keep the times in task storage when the
 * program prog (a tp_btf one) was chosen and the kernel has task storage
 * (5.11+), else in the hash; create only the map used.
 * tk_task_storage_usable: libtrace's bpf.h. */
#define TK_SCHED_CHOOSE_START_MAP(skel, prog)                                   \
	do {                                                                    \
		bool task_ = bpf_program__autoload((skel)->progs.prog) &&       \
			     tk_task_storage_usable();                          \
		(skel)->rodata->tk_sched_task_storage = task_;                  \
		bpf_map__set_autocreate((skel)->maps.start_task, task_);        \
		bpf_map__set_autocreate((skel)->maps.start, !task_);            \
	} while (0)

#endif
