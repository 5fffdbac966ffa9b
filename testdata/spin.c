// spin.c: a thread that makes no system call at all. It busy-waits on an
// atomic flag (a pure spin: no counter, no syscalls) until main, after
// usleep(100 ms), sets it. The recorder must preempt the spinner to let main
// run, and replay must reproduce where the spin was interrupted. Also prints
// a getrandom value.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/random.h>
#include <unistd.h>

static atomic_int flag;

static void *spinner(void *arg) {
	(void)arg;
	while (!atomic_load(&flag))
		;
	return NULL;
}

int main(void) {
	pthread_t th;
	pthread_create(&th, NULL, spinner, NULL);
	usleep(100000);
	atomic_store(&flag, 1);
	pthread_join(th, NULL);
	unsigned int r = 0;
	if (getrandom(&r, sizeof r, 0) != sizeof r) {
		perror("getrandom");
		return 1;
	}
	printf("flag seen\n");
	printf("random: %08x\n", r);
	return 0;
}
