/* The innermost functions of the profile tests' call chains: c() spins
 * on the CPU (or calls getppid(2) in a loop) for a given number of
 * seconds of its thread's CPU time; z() spins, for the second thread's
 * chain x -> y -> z. getppid is called with the syscall instruction in
 * c itself: libc's syscall() keeps no frame pointer, so a sample in the
 * kernel would unwind from it to b, skipping c. Built into stack_spin.c, or on its own as a shared
 * library (-fPIC -shared) that stack_spin -DC_IN_LIB calls.
 *
 * The clock is read every few ms of work, so that samples in
 * thread_cpu() and its syscall are a negligible fraction of c's.
 * c_rounds and z_rounds count the spins' rounds of work: the workload's
 * throughput, which bench/unwind_cpu.py reads from /proc/PID/mem. */
#include <sys/syscall.h>
#include <time.h>

static inline __attribute__((always_inline)) void getppid_syscall(void)
{
#if defined(__x86_64__)
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "0"((long)SYS_getppid)
			 : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = SYS_getppid;
	register long x0 __asm__("x0");

	__asm__ volatile("svc 0" : "=r"(x0) : "r"(x8) : "memory");
#else
#error "getppid_syscall: add this architecture"
#endif
}

__attribute__((noinline)) double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

volatile unsigned long c_rounds, z_rounds;

__attribute__((noinline)) void c(double seconds, int syscalls)
{
	volatile unsigned long x = 0;
	double end = thread_cpu() + seconds;
	int i, n = syscalls ? 2000 : 2000000;

	do {
		for (i = 0; i < n; i++) {
			if (syscalls)
				getppid_syscall();
			else
				x += i;
		}
		c_rounds++;
	} while (thread_cpu() < end);
}

__attribute__((noinline)) void z(double seconds)
{
	volatile unsigned long x = 0;
	double end = thread_cpu() + seconds;
	int i;

	do {
		for (i = 0; i < 2000000; i++)
			x += i;
		z_rounds++;
	} while (thread_cpu() < end);
}
