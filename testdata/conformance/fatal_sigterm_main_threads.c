// code: 143
// The main thread raises SIGTERM (default action: the process ends) while
// two other threads are blocked, one in read and one in a futex wait: the
// signal must be delivered before the deaths it causes are replayed.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static int fds[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void *reader(void *arg) {
	char c;
	(void)arg;
	read(fds[0], &c, 1);
	return NULL;
}

static void *waiter(void *arg) {
	(void)arg;
	pthread_mutex_lock(&mu);
	pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return NULL;
}

int main(void) {
	pthread_t a, b;
	pipe(fds);
	pthread_create(&a, NULL, reader, NULL);
	pthread_create(&b, NULL, waiter, NULL);
	usleep(10000);
	printf("OK\n");
	fflush(stdout);
	raise(SIGTERM);
	printf("not reached\n");
	return 0;
}
