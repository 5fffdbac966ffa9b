// threadloop: three threads computing between system calls and taking a
// mutex, so a recording has several live threads over a long replay (for
// checkpoints of multi-threaded processes).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned long total;
static long calls = 1500, work = 200000;

static void *worker(void *arg) {
	unsigned long x = 88172645463325252UL + (unsigned long)arg;
	for (long i = 0; i < calls; i++) {
		for (long j = 0; j < work; j++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		pthread_mutex_lock(&mu);
		total += (x & 0xff) + (getppid() & 1);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

int main(int argc, char **argv) {
	if (argc > 1)
		calls = atol(argv[1]);
	if (argc > 2)
		work = atol(argv[2]);
	pthread_t th[3];
	for (long i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	printf("%lu\n", total);
	return 0;
}
