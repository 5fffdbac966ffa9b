// race.c: two threads each increment a shared counter N times (argv[1],
// default 2000000) without a lock, then the total is printed with the
// number of updates lost. Recorded with --chaos, the preemptions in the
// middle of counter++ (between its load and its store) lose updates; replay
// reproduces the same total.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long counter;
static long n = 2000000;

static void *work(void *arg) {
	(void)arg;
	for (long i = 0; i < n; i++)
		counter++;
	return NULL;
}

int main(int argc, char **argv) {
	if (argc > 1)
		n = atol(argv[1]);
	pthread_t a, b;
	pthread_create(&a, NULL, work, NULL);
	pthread_create(&b, NULL, work, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("total %ld lost %ld\n", counter, 2 * n - counter);
	return 0;
}
