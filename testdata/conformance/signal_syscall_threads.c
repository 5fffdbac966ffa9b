// Four threads spam system calls (getppid, sched_yield, a pipe write and
// read) while a 1 ms interval timer sends SIGALRM to the process; the main
// thread waits until 50 ticks were counted. The recording must not starve a
// thread or hold a signal back until a timeout.
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

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
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	pthread_t th[4];
	for (long i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, spam, (void *)i);
	struct itimerval it = {{0, 1000}, {0, 1000}};
	setitimer(ITIMER_REAL, &it, NULL);
	while (atomic_load(&ticks) < 50)
		usleep(1000);
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	atomic_store(&stop, 1);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 4; i++)
		if (calls[i] == 0)
			printf("thread %d made no call\n", i);
	printf("OK\n");
	return 0;
}
