/* A workload for stackcount's tests: on each command line from stdin it
 * makes an exact number of calls through a known chain of functions,
 * then answers "done" on stdout; at end of input it exits.
 *
 *   calls N      main -> outer -> middle -> target_func, N times
 *   split A B    main -> path1 -> via_one -> shared_func, A times, and
 *                main -> path2 -> via_two -> shared_func, B times
 *   lib N        main -> use_lib -> sc_lib_entry -> sc_lib_inner ->
 *                sc_lib_target (the last three in libsctarget.so), N times
 *   getppid N    main -> sys_outer -> sys_middle -> do_getppid: the
 *                getppid syscall, N times
 *   fsync N      main -> sys_outer -> sys_middle -> do_fsync: the fsync
 *                syscall on fd -1 (EBADF, past the syscall's entry
 *                point), N times
 *   exec PATH    execs PATH (another build of this program, which says
 *                "ready" and reads on from the same stdin)
 *
 * The syscalls are made by inline "syscall" instructions inside the
 * named functions, not through libc's wrappers (built without frame
 * pointers, they would hide their caller from a frame-pointer walk).
 * Built by the tests with -O0 -fno-omit-frame-pointer -fno-inline, PIE
 * and not, linked with libsctarget.so (stackcount_lib.c). It says
 * "ready" first. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "raw_syscall.h"

#define NOINLINE __attribute__((noinline))

void sc_lib_entry(long n);

NOINLINE void target_func(void)
{
	__asm__ volatile("" ::: "memory");
}

NOINLINE void middle(long n)
{
	for (long i = 0; i < n; i++)
		target_func();
}

NOINLINE void outer(long n)
{
	middle(n);
}

NOINLINE void shared_func(void)
{
	__asm__ volatile("" ::: "memory");
}

NOINLINE void via_one(long n)
{
	for (long i = 0; i < n; i++)
		shared_func();
}

NOINLINE void via_two(long n)
{
	for (long i = 0; i < n; i++)
		shared_func();
}

NOINLINE void path1(long n)
{
	via_one(n);
}

NOINLINE void path2(long n)
{
	via_two(n);
}

NOINLINE void use_lib(long n)
{
	sc_lib_entry(n);
}

NOINLINE void do_getppid(void)
{
	raw_syscall1(SYS_getppid, 0);
}

NOINLINE void do_fsync(void)
{
	raw_syscall1(SYS_fsync, -1);
}

NOINLINE void sys_middle(long n, void (*fn)(void))
{
	for (long i = 0; i < n; i++)
		fn();
}

NOINLINE void sys_outer(long n, void (*fn)(void))
{
	sys_middle(n, fn);
}

int main(void)
{
	char line[256], cmd[32], path[200];
	long n, m;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		m = 0;
		if (sscanf(line, "exec %199s", path) == 1) {
			execl(path, path, (char *)NULL);
			return 3;
		}
		if (sscanf(line, "%31s %ld %ld", cmd, &n, &m) < 2)
			return 2;
		if (!strcmp(cmd, "calls"))
			outer(n);
		else if (!strcmp(cmd, "split")) {
			path1(n);
			path2(m);
		} else if (!strcmp(cmd, "lib"))
			use_lib(n);
		else if (!strcmp(cmd, "getppid"))
			sys_outer(n, do_getppid);
		else if (!strcmp(cmd, "fsync"))
			sys_outer(n, do_fsync);
		else
			return 2;
		printf("done\n");
	}
	return 0;
}
