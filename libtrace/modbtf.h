/* BTF attach targets (fentry, fexit, tp_btf) in kernel modules, found
 * by scanning each module's own types once: libbpf 1.1 looks a module
 * function up by scanning every type from the first, vmlinux's included
 * (about 127,000 of them), in each module loaded before the one that has
 * it, for each program. fsslower's 10 programs for ext4, a module loaded
 * after udev's 60 in the test VMs: 4.6 s of CPU under TCG to attach,
 * where kprobes took 0.3. */
#ifndef TK_MODBTF_H
#define TK_MODBTF_H

#include <bpf/btf.h>
#include <stdbool.h>

/* Whether the kernel has BTF of a module loaded (/sys/kernel/btf lists
 * something beside vmlinux): only then can a target be in one. */
bool tk_module_btfs_present(void);

/* Type NAME of KIND (BTF_KIND_FUNC, BTF_KIND_TYPEDEF) in a loaded
 * module's own BTF, split on BASE (the running kernel's): 0 with the
 * module BTF's descriptor (kept open until tk_module_btf_forget: the
 * program's load names it), the type's ID and the module's name; -ENOENT when no
 * module has it. */
int tk_module_btf_find(const struct btf *base, const char *name, int kind, int *btf_fd,
		       int *type_id, const char **module);

/* Frees the parsed module BTFs, which refer to BASE: before BASE is
 * freed. Their descriptors stay open. */
void tk_module_btf_release(void);

/* Closes their descriptors too, once the programs that named them are
 * loaded (a loaded program holds its target's module): the next look-up
 * lists the modules loaded then, not the ones of a load before (a module
 * unloaded meanwhile would be a target the kernel refuses, one loaded
 * meanwhile would be missed). */
void tk_module_btf_forget(void);

#endif
