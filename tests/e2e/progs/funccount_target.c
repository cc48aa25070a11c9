/* A workload for funccount's tests: each command (a line on stdin, or
 * the arguments when given) makes exact calls, then it says "done":
 *
 *   f N M        fa() N times and fb() M times (fc() never: a function
 *                the pattern f* matches that is not called)
 *   getppid N    the getppid syscall N times, by an inline "syscall"
 *                instruction (no libc wrapper, which may cache or skip)
 *   getpgid N    the getpgid syscall N times, the same way
 *   libc N       libc's getppid() N times
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "raw_syscall.h"

#define NOINLINE __attribute__((noinline))

NOINLINE void fa(void)
{
	__asm__ volatile("" ::: "memory");
}

NOINLINE void fb(void)
{
	__asm__ volatile("" ::: "memory");
}

NOINLINE void fc(void)
{
	__asm__ volatile("" ::: "memory");
}

static int run(const char *cmd, long n, long m)
{
	long i;

	if (!strcmp(cmd, "f")) {
		for (i = 0; i < n; i++)
			fa();
		for (i = 0; i < m; i++)
			fb();
	} else if (!strcmp(cmd, "getppid")) {
		for (i = 0; i < n; i++)
			raw_syscall1(SYS_getppid, 0);
	} else if (!strcmp(cmd, "getpgid")) {
		for (i = 0; i < n; i++)
			raw_syscall1(SYS_getpgid, 0);
	} else if (!strcmp(cmd, "libc")) {
		for (i = 0; i < n; i++)
			getppid();
	} else {
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char line[256], cmd[32];
	long n, m;

	if (argc > 2)
		return run(argv[1], atol(argv[2]), argc > 3 ? atol(argv[3]) : 0);
	if (argc > 1)  /* never: keeps fc() in the program */
		fc();
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		m = 0;
		if (sscanf(line, "%31s %ld %ld", cmd, &n, &m) < 2 || run(cmd, n, m))
			return 2;
		printf("done\n");
	}
	return 0;
}
