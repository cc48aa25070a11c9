/* The start gate of the lock workloads (lock_target.c, rwsem_target.c),
 * with -g: their threads wait at it until a line (the test's "go") comes
 * on stdin, so that the tracer attaches before they start, not while
 * they hammer the locks it probes. Attaching klockstat's 25 kprobes and
 * 11 kretprobes beside the running threads took over 300 s on arm64 6.1
 * under TCG on a loaded host (each kprobe armed is kernel text patched
 * with both vCPUs stopped), where it takes 26 s beside idle ones. Without
 * -g the gate is open from the start. */
#ifndef START_GATE_H
#define START_GATE_H

#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static bool gate_is_open;

/* In a thread, before its work. */
static void gate_wait(void)
{
	pthread_mutex_lock(&gate_mu);
	while (!gate_is_open)
		pthread_cond_wait(&gate_cv, &gate_mu);
	pthread_mutex_unlock(&gate_mu);
}

static void gate_open(void)
{
	pthread_mutex_lock(&gate_mu);
	gate_is_open = true;
	pthread_cond_broadcast(&gate_cv);
	pthread_mutex_unlock(&gate_mu);
}

/* In main, with -g: read stdin to the end of a line; false when stdin
 * ended first (the test stops before it said go). */
static bool gate_read_go(void)
{
	ssize_t r;
	char c;

	while ((r = read(0, &c, 1)) > 0 && c != '\n')
		;
	return r > 0;
}

#endif
