// Four threads spam system calls (getppid, sched_yield, a pipe write and
// read) while a 1 ms interval timer sends SIGALRM to the process; the main
// thread waits until 50 ticks were counted. The recording must not starve a
// thread or hold a signal back until a timeout.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "../sigcount.h"

static atomic_int ticks, stop;
static long calls[4];

static void on_alarm(int sig) {
	(void)sig;
	atomic_fetch_add(&ticks, 1);
}

static void *spam(void *arg) {
	long i = (long)arg;
	int fds[2];
	char c = 'x';
	pipe(fds);
	while (!atomic_load(&stop)) {
		getppid();
		sched_yield();
		write(fds[1], &c, 1);
		read(fds[0], &c, 1);
		calls[i]++;
	}
	return NULL;
}

int main(void) {
	install(SIGALRM, on_alarm, SA_RESTART);
	pthread_t th[4];
	for (long i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, spam, (void *)i);
	start_timer(1000);
	while (atomic_load(&ticks) < 50)
		usleep(1000);
	stop_timer();
	atomic_store(&stop, 1);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 4; i++)
		if (calls[i] == 0)
			printf("thread %d made no call\n", i);
	printf("OK\n");
	return 0;
}
