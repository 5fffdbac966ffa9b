// assert.c: two threads add to a counter without a lock; main asserts
// the total. With chaos, a preemption between a load and its store loses
// an update, and the assertion fails. With "yield" as the second argument
// each increment gives the CPU away between its load and its store, and
// updates are lost whatever the scheduling; with "locked", the same, but
// each store is made holding a mutex (that the load did not hold). A third
// argument gives the second thread that many more increments, which it
// makes alone after the first thread has ended; the first one then starts
// counting only after the second has, so that its stores come second in
// each round and store the value the other just stored (updates lost
// without a change of the value).
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

static volatile long counter;
static long per_thread = 100000, extra;
static int yield, locked;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void *work(void *arg)
{
	long n = per_thread + (long)arg;
	if (yield && extra && n == per_thread)
		while (counter == 0)
			sched_yield();
	for (long i = 0; i < n; i++) {
		if (yield) {
			long v = counter;
			sched_yield();
			if (locked)
				pthread_mutex_lock(&mu);
			counter = v + 1;
			if (locked)
				pthread_mutex_unlock(&mu);
		} else {
			counter++;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		per_thread = atol(argv[1]);
	yield = argc > 2 && (argv[2][0] == 'y' || argv[2][0] == 'l');
	locked = argc > 2 && argv[2][0] == 'l';
	if (argc > 3)
		extra = atol(argv[3]);
	pthread_t t1, t2;
	pthread_create(&t1, NULL, work, NULL);
	pthread_create(&t2, NULL, work, (void *)extra);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	printf("total %ld\n", counter);
	assert(counter == 2 * per_thread + extra);
	return 0;
}
