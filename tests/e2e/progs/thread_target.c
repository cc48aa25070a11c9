/* threadsnoop's workload: names itself argv[1] (with argv[2] "wait",
 * says "ready" and waits for a line on stdin first), then starts one
 * thread in each of tk_worker_alpha, tk_worker_beta (twice) and
 * tk_worker_gamma, joining each;
 * then a pthread_create that fails (EINVAL: an invalid scheduling
 * policy in its attributes). Prints each created thread's kernel id
 * (in creation order) and the failing call's result, one line, then
 * waits for a line on stdin before exiting, so that its symbols can be
 * read. Built -O0 with frame pointers; the functions are global so the
 * symbol table names them. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static pid_t tids[4];

void *tk_worker_alpha(void *arg)
{
	*(pid_t *)arg = (pid_t)syscall(SYS_gettid);
	return NULL;
}

void *tk_worker_beta(void *arg)
{
	*(pid_t *)arg = (pid_t)syscall(SYS_gettid);
	return NULL;
}

void *tk_worker_gamma(void *arg)
{
	*(pid_t *)arg = (pid_t)syscall(SYS_gettid);
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*const fns[4])(void *) = { tk_worker_alpha, tk_worker_beta, tk_worker_beta,
					  tk_worker_gamma };
	pthread_attr_t bad;
	pthread_t th[4], t;
	char line[16];
	int i, r;

	if (argc > 1)
		prctl(PR_SET_NAME, argv[1], 0, 0, 0);
	if (argc > 2 && !strcmp(argv[2], "wait")) {
		printf("ready\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
	}
	for (i = 0; i < 4; i++) {
		if (pthread_create(&th[i], NULL, fns[i], &tids[i]))
			return 1;
		pthread_join(th[i], NULL);
	}
	pthread_attr_init(&bad);
	pthread_attr_setinheritsched(&bad, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&bad, SCHED_FIFO);   /* priority 0: EINVAL */
	r = pthread_create(&t, &bad, tk_worker_alpha, &tids[0]);
	for (i = 0; i < 4; i++)
		printf("%d ", tids[i]);
	printf("%d\n", r);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 0;
	return 0;
}
