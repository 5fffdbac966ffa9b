// assert.c: two threads add to a counter without a lock; main asserts
// the total. With chaos, a preemption between a load and its store loses
// an update, and the assertion fails.
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile long counter;
static long per_thread = 100000;

static void *work(void *arg)
{
	(void)arg;
	for (long i = 0; i < per_thread; i++)
		counter++;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		per_thread = atol(argv[1]);
	pthread_t t1, t2;
	pthread_create(&t1, NULL, work, NULL);
	pthread_create(&t2, NULL, work, NULL);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	printf("total %ld\n", counter);
	assert(counter == 2 * per_thread);
	return 0;
}
