/* The workload of the user-stack unwinding tests (test_unwind.py): a
 * chain main -> chain_a -> chain_b -> chain_c whose leaf work goes
 * through libc, built once with frame pointers and once without any
 * (-O2 -fomit-frame-pointer).
 *
 *   unwind_chain sleep N MS   chain_c calls nanosleep N times (x86-64
 *                             libc's wrapper keeps no frame pointer: a
 *                             frame-pointer walk loses chain_c)
 *   unwind_chain syscall N MS the same sleeps by syscall(2) (arm64: its
 *                             libc's nanosleep keeps a frame record, its
 *                             syscall(), in assembly, none)
 *   unwind_chain spin SEC     chain_c spins SEC seconds of wall time and
 *                             at least SEC/2 s of its own CPU time (wall
 *                             time: a spin of SEC seconds of thread CPU
 *                             time alone ended after 1 to 3 samples at
 *                             99 Hz under TCG, on 5.10 and 6.12 alike;
 *                             CPU time too: on a host busy with two CPU
 *                             hogs, 2 s of wall time gave 48 samples)
 *   unwind_chain getpid N MS  chain_c calls getpid() N times (libc),
 *                             sleeping MS ms after each (the tool notes
 *                             the process while it lives)
 *
 * It prints "ready" first and "done" last. noinline and the use of each
 * callee's result keep every function a frame of its own (no inlining,
 * no tail calls), with or without optimization. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static long long ns_of(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) long chain_c(const char *what, long n, long arg)
{
	struct timespec ts = { arg / 1000, (arg % 1000) * 1000000L };
	long r = 0;

	if (!strcmp(what, "sleep")) {
		for (long i = 0; i < n; i++)
			r += nanosleep(&ts, NULL);
	} else if (!strcmp(what, "syscall")) {
		for (long i = 0; i < n; i++)
			r += syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ts, NULL);
	} else if (!strcmp(what, "getpid")) {
		for (long i = 0; i < n; i++) {
			r += getpid();
			nanosleep(&ts, NULL);
		}
	} else {
		long long wall_end = ns_of(CLOCK_MONOTONIC) + n * 1000000000LL;
		long long cpu_end = ns_of(CLOCK_THREAD_CPUTIME_ID) + n * 500000000LL;

		/* The clocks are read once a million additions: a sample
		 * in arm64's vDSO, which has no CFI, keeps the frame-pointer
		 * walk (and the CPU clock's read is a system call there). */
		do {
			for (int i = 0; i < 1000000; i++)
				sink += i;
		} while (ns_of(CLOCK_MONOTONIC) < wall_end ||
			 ns_of(CLOCK_THREAD_CPUTIME_ID) < cpu_end);
	}
	sink += r;
	return r + 1;
}

__attribute__((noinline)) long chain_b(const char *what, long n, long arg)
{
	long r = chain_c(what, n, arg);

	__asm__ volatile("" : "+r"(r));
	return r + 2;
}

__attribute__((noinline)) long chain_a(const char *what, long n, long arg)
{
	long r = chain_b(what, n, arg);

	__asm__ volatile("" : "+r"(r));
	return r + 3;
}

int main(int argc, char **argv)
{
	long r;

	if (argc < 3) {
		fprintf(stderr, "usage: unwind_chain sleep|syscall|spin|getpid N [MS]\n");
		return 2;
	}
	printf("ready\n");
	fflush(stdout);
	r = chain_a(argv[1], atol(argv[2]), argc > 3 ? atol(argv[3]) : 0);
	__asm__ volatile("" : "+r"(r));
	printf("done\n");
	fflush(stdout);
	return r == 0;
}
