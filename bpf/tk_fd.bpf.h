/* The struct file behind a descriptor of the current task: its fd table
 * read with CO-RE, as the kernel's files_lookup_fd_raw does (no
 * reference taken: valid while the task keeps the descriptor, which a
 * syscall's own tracepoints can rely on). */
#ifndef TK_FD_BPF_H
#define TK_FD_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

/* The file of descriptor fd, or NULL for a closed or out of range fd. */
static __always_inline struct file *tk_fd_file(int fd)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	struct file **fds;
	struct file *f = NULL;

	if (fd < 0 || !fdt || (u32)fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]))
		return NULL;
	return f;
}

#endif
