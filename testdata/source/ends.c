/* How a program ends, for the end of its recording (e2e/end_test.go).
 * As it is, main prints its total: the recording's last stretch, after
 * that write, is short. -DQUIET makes no system call between the start
 * and the exit: all of main is in the last stretch. -DTHREAD exits from a
 * second thread while main waits for it. -DCRASH dies of SIGSEGV instead
 * of exiting. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long total;

static void add(long v)
{
	total += v;
}

static void finish(long v)
{
	add(v);
#ifndef QUIET
	printf("total %ld\n", total);
#endif
#ifdef CRASH
	*(volatile long *)(total & 1) = total;
#endif
}

static void *worker(void *arg)
{
	(void)arg;
	finish(42);
	exit(0);
}

int main(void)
{
	for (long i = 0; i < 20000; i++)
		add(i & 7);
#ifdef THREAD
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
#else
	finish(42);
#endif
	return 0;
}
