/* An allocation storm for bench/memleak_overhead.py: N malloc/free pairs
 * of 64 bytes (default 2,000,000), nothing else. */
#include <stdlib.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	void *volatile p;

	for (long i = 0; i < n; i++) {
		p = malloc(64);
		free(p);
	}
	return 0;
}
