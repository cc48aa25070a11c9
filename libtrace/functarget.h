/* Function targets as people write them, in bcc's syntax, for the tools
 * that probe one function (funclatency, stackcount):
 *
 *   FUNC        a kernel function                vfs_read
 *   LIB:FUNC    a function of a shared library   c:malloc  pthread:pthread_create
 *                                                libssl.so.3:SSL_read
 *   PATH:FUNC   a function of an ELF file        /usr/bin/bash:readline  ./a.out:work
 *   PROG:FUNC   a function of a program in PATH  bash:readline
 *
 * LIB is "c" for libc.so.*, "pthread" for libpthread.so.* (lib<LIB>.so
 * and its versions), or a full file name such as libssl.so.3. It is found
 * as the dynamic loader would find it: first the library that process PID
 * maps (when given), then the ld.so cache, then the standard library
 * directories; only libraries for this machine's architecture count.
 *
 * The function must exist: in /proc/kallsyms as a function (kernel), or
 * as a function defined in the file's .dynsym or .symtab (user), looked up
 * the way libbpf's uprobe attach looks it up. */
#ifndef TK_FUNCTARGET_H
#define TK_FUNCTARGET_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#define TK_FUNC_NAME_MAX 512

struct tk_func_target {
	char binary[PATH_MAX];       /* the ELF file; "" for a kernel function */
	char func[TK_FUNC_NAME_MAX]; /* the function's symbol name */
};

/* Resolve SPEC (the forms above) for process pid (0: any process).
 * Returns 0, or -errno with one line saying why in err (the spec itself
 * is not repeated):
 *   -EINVAL   malformed spec
 *   -ENOENT   no such file, library or program; no such kernel function
 *   -ENOEXEC  not an ELF executable or shared library
 *   -ESRCH    the file has no such function (or only imports it) */
int tk_func_target_resolve(const char *spec, pid_t pid,
			   struct tk_func_target *t, char *err, size_t errlen);

/* The pieces, for tests and for tools with a syntax of their own. */

/* The ELF file that OBJ (the part before the colon: LIB, PATH or PROG,
 * as above) names for process pid (0: any), into binary (PATH_MAX
 * bytes): 0, or -ENOENT / -ENOEXEC with err set. */
int tk_func_object_resolve(const char *obj, pid_t pid, char *binary,
			   size_t size, char *err, size_t errlen);

/* Path of library NAME (as LIB above) for process pid (0: any): 0 or
 * -ENOENT. */
int tk_find_library(const char *name, pid_t pid, char *path, size_t size);

/* Path of library NAME in an ld.so cache file (/etc/ld.so.cache): 0,
 * -ENOENT when it is not there, or another -errno when the file cannot
 * be read or is not an ld.so cache. */
int tk_ldcache_find(const char *cache, const char *name, char *path,
		    size_t size);

/* Is FUNC a function defined in the ELF file PATH? 0, or -ENOENT,
 * -ENOEXEC, -ESRCH as for tk_func_target_resolve, with err set. */
int tk_elf_func_check(const char *path, const char *func, char *err,
		      size_t errlen);

/* Is FUNC a kernel function in KALLSYMS (/proc/kallsyms)? 0, or -ENOENT
 * with err set. 0 too when the file cannot be read: the attach then says
 * what is wrong. */
int tk_kernel_func_check(const char *kallsyms, const char *func, char *err,
			 size_t errlen);

#endif
