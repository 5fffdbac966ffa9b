// starve.c: main waits up to 30 ms (in 1 ms sleeps) for a worker to start,
// while another thread keeps the CPU busy. Scheduled fairly the worker
// runs at once; a scheduler that starves it for a while (chaos
// priorities) breaks the assumption: "worker starved" and exit 1.
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static volatile int started, stop;

static void *spinner(void *arg)
{
	(void)arg;
	while (!stop)
		;
	return NULL;
}

static void *worker(void *arg)
{
	(void)arg;
	started = 1;
	return NULL;
}

int main(void)
{
	pthread_t s, w;
	pthread_create(&s, NULL, spinner, NULL);
	pthread_create(&w, NULL, worker, NULL);
	struct timespec start, now, ms = {0, 1000000};
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		nanosleep(&ms, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (!started && (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < 30);
	int ok = started;
	stop = 1;
	pthread_join(s, NULL);
	pthread_join(w, NULL);
	if (!ok) {
		fprintf(stderr, "worker starved\n");
		return 1;
	}
	printf("worker ran\n");
	return 0;
}
