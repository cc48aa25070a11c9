/* A workload for trace's tests: each command line from stdin makes an
 * exact set of calls, then it answers "done" (it says "ready" first):
 *
 *   calls N      item(i, "item-<i>", -7 * i) for i in 0..N-1; item
 *                returns i * 3 + strlen(name) + delta (names are built
 *                on the stack, so their pages are present)
 *   untouched    item(0, p, 0) with p in an anonymous page never
 *                touched: reading the string faults in BPF
 *   getppid N    libc's getppid(), N times
 *
 * Built by the tests with -O0 -fno-inline. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

__attribute__((noinline)) int item(int i, const char *name, long delta)
{
	return i * 3 + (int)strlen(name) + (int)delta;
}

int main(void)
{
	char line[128], cmd[32], name[32];
	long n, sum = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		n = 0;
		if (sscanf(line, "%31s %ld", cmd, &n) < 1)
			return 2;
		if (!strcmp(cmd, "calls")) {
			for (long i = 0; i < n; i++) {
				snprintf(name, sizeof(name), "item-%ld", i);
				sum += item((int)i, name, -7 * i);
			}
		} else if (!strcmp(cmd, "untouched")) {
			char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (p == MAP_FAILED)
				return 3;
			sum += item(0, p, 0);  /* strlen touches it: "" */
		} else if (!strcmp(cmd, "getppid")) {
			for (long i = 0; i < n; i++)
				sum += getppid();
		} else {
			return 2;
		}
		printf("done\n");
	}
	return sum == 42;  /* keep sum */
}
