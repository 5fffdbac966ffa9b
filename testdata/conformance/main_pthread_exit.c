// The main thread leaves with pthread_exit while two other threads go on:
// one computes without system calls, then both print and the last one to
// finish prints OK and ends the process (exit status 0, with the main
// thread a zombie meanwhile).
// flags: -pthread
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

static pthread_barrier_t gate;
static atomic_int finished;

static void *worker(void *arg) {
	long id = (long)arg;
	pthread_barrier_wait(&gate);
	volatile unsigned long x = 0;
	for (unsigned long i = 0; i < 30000000UL * (id + 1); i++)
		x += i;
	printf("worker %ld done: %lu\n", id, x);
	if (atomic_fetch_add(&finished, 1) == 1)
		printf("OK\n"); // the last one out
	fflush(stdout);
	return NULL;
}

int main(void) {
	pthread_barrier_init(&gate, NULL, 3);
	pthread_t t[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	pthread_barrier_wait(&gate);
	printf("main leaves\n");
	fflush(stdout);
	pthread_exit(NULL);
}
