// threads.c: scheduling nondeterminism. Four threads append their id 50 times
// to a shared array under a mutex, sometimes yielding or sleeping, so the
// interleaving (printed by main) varies between native runs. Exercises clone,
// futex contention, sched_yield and nanosleep.
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#define NTHREADS 4
#define PER 50

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int order[NTHREADS * PER];
static int n;

static void *worker(void *arg) {
	int id = (int)(long)arg;
	for (int i = 0; i < PER; i++) {
		pthread_mutex_lock(&mu);
		order[n++] = id;
		pthread_mutex_unlock(&mu);
		if ((i + id) % 7 == 0)
			usleep(50);
		else if (i % 3 == 0)
			sched_yield();
	}
	return NULL;
}

int main(void) {
	pthread_t th[NTHREADS];
	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	printf("count: %d\n", n);
	printf("order: ");
	for (int i = 0; i < n; i++)
		printf("%d", order[i]);
	printf("\n");
	return 0;
}
