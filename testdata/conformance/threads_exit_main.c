// The main thread returns from main (exit_group) while other threads are
// still running and blocked: the recording must end, not wait for them.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static int fds[2];

static void *reader(void *arg) {
	char c;
	(void)arg;
	read(fds[0], &c, 1); /* never written: blocks until exit_group */
	return NULL;
}

static void *spinner(void *arg) {
	volatile unsigned long n = 0;
	(void)arg;
	for (;;)
		n++;
	return NULL;
}

int main(void) {
	pthread_t a, b;
	pipe(fds);
	pthread_create(&a, NULL, reader, NULL);
	pthread_create(&b, NULL, spinner, NULL);
	usleep(20000);
	printf("OK\n");
	fflush(stdout);
	return 0;
}
