// yield: two threads pass a token N times (argv[1]), each waiting for its
// turn in a sched_yield loop.
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

static atomic_int turn;
static int rounds;

static void *other(void *arg) {
	(void)arg;
	for (int i = 0; i < rounds; i++) {
		while (atomic_load(&turn) != 1)
			sched_yield();
		atomic_store(&turn, 0);
	}
	return NULL;
}

int main(int argc, char **argv) {
	rounds = argc > 1 ? atoi(argv[1]) : 100;
	pthread_t t;
	pthread_create(&t, NULL, other, NULL);
	for (int i = 0; i < rounds; i++) {
		while (atomic_load(&turn) != 0)
			sched_yield();
		atomic_store(&turn, 1);
	}
	pthread_join(t, NULL);
	return 0;
}
