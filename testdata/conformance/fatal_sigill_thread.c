// code: 132
// A thread executes ud2 while the main thread sleeps in a blocking read:
// the process dies of SIGILL.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static int fds[2];

static void *worker(void *arg) {
	(void)arg;
	printf("OK\n");
	fflush(stdout);
	__asm__ volatile("ud2");
	return NULL;
}

int main(void) {
	pthread_t th;
	char c;
	pipe(fds);
	pthread_create(&th, NULL, worker, NULL);
	read(fds[0], &c, 1);
	return 0;
}
