/* A workload with known call chains, for the profile tests:
 *
 *   stack_spin MODE SECONDS [once]
 *
 * MODE spin:    main -> a -> b -> c, c spinning for SECONDS of CPU time
 *      syscall: the same, c calling getppid(2) in a loop (kernel frames)
 *      two:     spin, and a second thread x -> y -> z spinning as long
 *
 * It prints "ready PID TID2", waits for a line on stdin, runs, prints
 * "done CPU1 CPU2 RUNS1 RUNS2" (each thread's CPU seconds, and the number
 * of times it went on a CPU to run them: the profile tests' sampling
 * noise), and exits at EOF on stdin.
 * With "once" it runs at once and exits (a short-lived process).
 *
 * Built with -O0 -fno-omit-frame-pointer -fno-inline; with -DC_IN_LIB
 * c() and z() come from stack_lib.c built as a shared library. */
#define _GNU_SOURCE  /* RUSAGE_THREAD */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef C_IN_LIB
double thread_cpu(void);
void c(double seconds, int syscalls);
void z(double seconds);
#else
#include "stack_lib.c"
#endif

static double seconds;
static int syscalls;
static double cpu1, cpu2;
static long runs1, runs2;
static pthread_barrier_t start_line;
static volatile pid_t tid2;

/* The calling thread's runs on a CPU so far: each context switch away
 * from it, voluntary or not, ends one. */
static long thread_runs(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		abort();
	return 1 + ru.ru_nvcsw + ru.ru_nivcsw;
}

__attribute__((noinline)) void b(void) { c(seconds, syscalls); }
__attribute__((noinline)) void a(void) { b(); }

__attribute__((noinline)) void y(void) { z(seconds); }
__attribute__((noinline)) void x(void) { y(); }

static void *second(void *arg)
{
	(void)arg;
	tid2 = syscall(SYS_gettid);
	pthread_barrier_wait(&start_line);  /* tid known */
	pthread_barrier_wait(&start_line);  /* go */
	x();
	cpu2 = thread_cpu();
	runs2 = thread_runs();
	return NULL;
}

int main(int argc, char **argv)
{
	int two, once;
	pthread_t t;
	char line[64];

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: %s spin|syscall|two SECONDS [once]\n", argv[0]);
		return 2;
	}
	syscalls = !strcmp(argv[1], "syscall");
	two = !strcmp(argv[1], "two");
	seconds = atof(argv[2]);
	once = argc == 4 && !strcmp(argv[3], "once");
	if (two) {
		pthread_barrier_init(&start_line, NULL, 2);
		pthread_create(&t, NULL, second, NULL);
		pthread_barrier_wait(&start_line);
	}
	printf("ready %d %d\n", (int)getpid(), (int)tid2);
	fflush(stdout);
	if (!once && !fgets(line, sizeof(line), stdin))
		return 1;
	if (two)
		pthread_barrier_wait(&start_line);
	a();
	cpu1 = thread_cpu();
	runs1 = thread_runs();
	if (two)
		pthread_join(t, NULL);
	printf("done %.6f %.6f %ld %ld\n", cpu1, cpu2, runs1, runs2);
	fflush(stdout);
	while (!once && fgets(line, sizeof(line), stdin))
		;
	return 0;
}
