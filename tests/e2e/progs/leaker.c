/* memleak's workload (tests/e2e/test_memleak.py): leaks known blocks
 * from known functions and frees the rest, for memleak and valgrind to
 * report alike. Built with frame pointers, at -O0 (each leak_* function
 * calls the allocator itself).
 *
 *   leaker [wait]
 *   leaker hold FIFO
 *   leaker sample N [FIFO]
 *
 * With "wait", it reads a line from stdin before it starts (the tracer
 * attaches to the running process first) and another before it exits
 * (after the tracer's report), and prints "pid PID" and "done" lines.
 * With "hold FIFO", once done it opens FIFO and reads a line from it
 * before it exits (a tracer running it as its command can be sure of
 * it, and read its mappings, first).
 * With "sample N" it only leaks N blocks of 16 bytes from leak_sampled,
 * one after another on CPU 0 (memleak -s counts calls per CPU), then
 * holds on FIFO as above if given.
 *
 * What it leaks (definitely lost: no pointer kept):
 *   leak_malloc      3 x malloc(100)                    300 B, 3 blocks
 *   leak_calloc      2 x calloc(4, 50)                  400 B, 2 blocks
 *   leak_realloc     malloc(64), grown to 4096 by realloc, shrunk to 1000
 *                                                       1000 B, 1 block
 *   leak_memalign    2 x posix_memalign(64, 256)        512 B, 2 blocks
 *   thread_leak      malloc(300) in a second thread     300 B, 1 block
 *   child_leak       malloc(500) in a forked child      500 B, 1 block
 *   parent_inherit   malloc(77) before the fork, freed by the child only
 *                    (its own copy): the parent's leaks  77 B, 1 block
 *   leak_realloc_fail malloc(128), then a realloc of it that fails:
 *                    the block stays                    128 B, 1 block
 *   leak_big         malloc(300000), which the C library serves
 *                    with an mmap of its own            300000 B, 1 block
 * And, for memleak alone (valgrind does not count mappings):
 *   leak_mmap        an anonymous mmap of 3 pages       12288 B, 1 block
 * Freed, and so in no report: blocks of every allocator, blocks that a
 * second thread frees, allocator calls that fail, a mapping unmapped. */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

/* Stores through this stop the compiler from dropping the allocations. */
static void *volatile sink;
static void *volatile inherited;

NOINLINE static void leak_malloc(void)
{
	for (int i = 0; i < 3; i++)
		sink = malloc(100);
}

NOINLINE static void leak_calloc(void)
{
	for (int i = 0; i < 2; i++)
		sink = calloc(4, 50);
}

NOINLINE static void leak_realloc(void)
{
	void *p = malloc(64);

	p = realloc(p, 4096);
	sink = realloc(p, 1000);
}

NOINLINE static void leak_memalign(void)
{
	void *p;

	for (int i = 0; i < 2; i++)
		if (!posix_memalign(&p, 64, 256))
			sink = p;
}

NOINLINE static void leak_realloc_fail(void)
{
	volatile size_t huge = SIZE_MAX / 2;
	void *p = malloc(128);

	if (!realloc(p, huge))
		sink = p;
}

NOINLINE static void leak_big(void)
{
	sink = malloc(300000);
}

NOINLINE static void leak_mmap(void)
{
	void *p = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p != MAP_FAILED)
		sink = p;
}

NOINLINE static void leak_sampled(long n)
{
	for (long i = 0; i < n; i++)
		sink = malloc(16);
}

NOINLINE static void parent_inherit(void)
{
	inherited = malloc(77);
}

NOINLINE static void child_leak(void)
{
	sink = malloc(500);
}

/* Every allocator, each block freed; and calls that fail. */
NOINLINE static void free_all(void)
{
	volatile size_t huge = SIZE_MAX / 2;
	void *p;

	for (int i = 0; i < 100; i++) {
		free(malloc(32 + i));
		free(calloc(i + 1, 8));
		p = realloc(NULL, 48);           /* malloc */
		p = realloc(p, 4000);
		p = reallocarray(p, 10, 16);
		free(p);
		p = realloc(malloc(16), 0);      /* frees */
		if (!posix_memalign(&p, 128, 200))
			free(p);
		free(aligned_alloc(64, 128));
		free(memalign(32, 96));
		free(valloc(64));
		free(malloc(200000));            /* the library's mmap */
		p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED)
			munmap(p, 4096);
	}
	/* Failures: nothing to track. */
	sink = malloc(huge);
	sink = calloc(huge, 4);
	if (posix_memalign(&p, 3, 10) == 0)
		sink = p;
	sink = NULL;
}

/* Blocks one thread allocates and another frees. */
static void *handed[5];

NOINLINE static void thread_leak(void)
{
	sink = malloc(300);
}

static void *allocating_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < 5; i++)
		handed[i] = malloc(40);
	thread_leak();
	return NULL;
}

static void *freeing_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < 5; i++) {
		free(handed[i]);
		handed[i] = NULL;
	}
	return NULL;
}

static void wait_line(void)
{
	char line[64];

	if (!fgets(line, sizeof(line), stdin))
		exit(1);
}

/* Done: wait for a line on fifo. */
static void hold(const char *fifo)
{
	if (!freopen(fifo, "r", stdin))
		exit(1);
	wait_line();
}

int main(int argc, char **argv)
{
	bool wait = argc > 1 && !strcmp(argv[1], "wait");
	pthread_t t;
	pid_t child;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc > 2 && !strcmp(argv[1], "sample")) {
		cpu_set_t cpu0;

		CPU_ZERO(&cpu0);
		CPU_SET(0, &cpu0);
		if (sched_setaffinity(0, sizeof(cpu0), &cpu0))
			return 1;
		leak_sampled(atol(argv[2]));
		sink = NULL;
		if (argc > 3)
			hold(argv[3]);
		return 0;
	}
	if (wait) {
		printf("pid %d\n", getpid());
		wait_line();
	}
	parent_inherit();
	child = fork();
	if (child == 0) {
		free(inherited);
		inherited = NULL;
		child_leak();
		sink = NULL;
		_exit(0);
	}
	waitpid(child, NULL, 0);
	inherited = NULL;
	leak_malloc();
	leak_calloc();
	leak_realloc();
	leak_memalign();
	leak_realloc_fail();
	leak_big();
	leak_mmap();
	pthread_create(&t, NULL, allocating_thread, NULL);
	pthread_join(t, NULL);
	pthread_create(&t, NULL, freeing_thread, NULL);
	pthread_join(t, NULL);
	free_all();
	sink = NULL;
	if (wait) {
		printf("done\n");
		wait_line();
	}
	if (argc > 2 && !strcmp(argv[1], "hold"))
		hold(argv[2]);
	return 0;
}
