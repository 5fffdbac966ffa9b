// code: 134
// A thread other than the main one calls abort() while main waits in
// pthread_join: the whole process dies of SIGABRT.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *worker(void *arg) {
	(void)arg;
	printf("OK\n");
	fflush(stdout);
	abort();
	return NULL;
}

int main(void) {
	pthread_t th;
	pthread_create(&th, NULL, worker, NULL);
	pthread_join(th, NULL);
	printf("not reached\n");
	return 0;
}
