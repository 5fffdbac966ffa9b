// Threads for the attach tests: three workers add to a counter under a
// mutex and sleep, each at its own pace; the main thread reports the
// counter and each worker's count on "get" (stdin), and exits on "x".
// With -d it forks away from its parent, as a daemon does.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "detach.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static long counts[3];

static void *worker(void *arg) {
	long id = (long)arg;
	struct timespec ts = {0, 1000000 * (id + 1)};
	for (;;) {
		pthread_mutex_lock(&mu);
		counter += id + 1;
		counts[id]++;
		pthread_mutex_unlock(&mu);
		char *p = malloc(64 * (id + 1));
		snprintf(p, 64, "worker %ld", id);
		free(p);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int main(int argc, char **argv) {
	detach_if_asked(argc, argv);
	pthread_t th[3];
	for (long i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("pid %d\n", getpid());
	char line[64];
	while (fgets(line, sizeof line, stdin)) {
		if (line[0] == 'x')
			return 0;
		pthread_mutex_lock(&mu);
		long sum = 0;
		for (int i = 0; i < 3; i++)
			sum += counts[i] * (i + 1);
		printf("counter %ld sum %ld counts %ld %ld %ld\n", counter, sum, counts[0], counts[1], counts[2]);
		pthread_mutex_unlock(&mu);
	}
	return 0;
}
