// code: 139
// A thread blocks SIGSEGV and then dereferences NULL: the kernel forces the
// signal (unblocks it, default action) and the process dies of SIGSEGV.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static void *worker(void *arg) {
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGSEGV);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	printf("OK\n");
	fflush(stdout);
	*(volatile int *)arg = 1;
	return NULL;
}

int main(void) {
	pthread_t th;
	pthread_create(&th, NULL, worker, NULL);
	pthread_join(th, NULL);
	return 0;
}
