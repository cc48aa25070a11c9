/* tests/systemd: the syscalls a test counts in tracekitd's metrics, made
 * in the guest: sched_get_priority_max(SCHED_FIFO) OK times, and ERR
 * times with a policy that does not exist (EINVAL). Nothing else in the
 * guest makes that syscall. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	long ok, err, i;

	if (argc != 3) {
		fprintf(stderr, "usage: %s OK ERR\n", argv[0]);
		return 2;
	}
	ok = atol(argv[1]);
	err = atol(argv[2]);
	for (i = 0; i < ok; i++)
		if (sched_get_priority_max(SCHED_FIFO) < 0)
			return 1;
	for (i = 0; i < err; i++)
		if (sched_get_priority_max(12345) != -1 || errno != EINVAL)
			return 1;
	return 0;
}
