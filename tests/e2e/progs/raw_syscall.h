/* A syscall by an inline instruction, for the test workloads: no libc
 * wrapper (which may cache, skip or add calls), and no function of its
 * own in the stack. */
#ifndef TK_TEST_RAW_SYSCALL_H
#define TK_TEST_RAW_SYSCALL_H

#include <sys/syscall.h>
#include <unistd.h>

static inline __attribute__((always_inline)) long raw_syscall3(long nr, long a0, long a1,
								long a2)
{
#if defined(__x86_64__)
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "0"(nr), "D"(a0), "S"(a1), "d"(a2)
			 : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a0;
	register long x1 __asm__("x1") = a1;
	register long x2 __asm__("x2") = a2;

	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
	return x0;
#else
	return syscall(nr, a0, a1, a2);
#endif
}

static inline __attribute__((always_inline)) long raw_syscall1(long nr, long a0)
{
	return raw_syscall3(nr, a0, 0, 0);
}

#endif
