// sched_yield: three threads pass a token round by round, each waiting for
// its turn in a sched_yield loop (no futex: the recorder must switch
// threads at the yields), and sched_yield always returns 0.
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

#define THREADS 3
#define ROUNDS 20

static atomic_int turn;
static atomic_int failures;
static int passes[THREADS];

static void *player(void *arg) {
	int me = (int)(long)arg;
	for (int r = 0; r < ROUNDS; r++) {
		while (atomic_load(&turn) % THREADS != me)
			if (sched_yield() != 0)
				atomic_fetch_add(&failures, 1);
		passes[me]++;
		atomic_fetch_add(&turn, 1);
	}
	return NULL;
}

int main(void) {
	assert(sched_yield() == 0);
	pthread_t t[THREADS];
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, player, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("turns %d, passes %d %d %d, failed yields %d\n", atomic_load(&turn), passes[0], passes[1], passes[2], atomic_load(&failures));
	assert(atomic_load(&turn) == THREADS * ROUNDS && atomic_load(&failures) == 0);
	printf("OK\n");
	return 0;
}
