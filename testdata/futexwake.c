// futexwake.c: FUTEX_WAKEs that wake no one, N of them while the process
// has one thread (the hook records them with no stop: pthread_once's
// wake, once a process, is one), then N while a second thread waits to be
// told to end (each made traced: it could wake another thread). It prints
// the addresses of the two words, which the calls' events show.
#include <linux/futex.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static int alone, shared;
static int pipefd[2];

static long wake(int *word) { return syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0); }

static void *waiter(void *arg) {
	char c;
	(void)arg;
	return read(pipefd[0], &c, 1) == 1 ? NULL : (void *)1;
}

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 100;
	long woken = 0;
	for (int i = 0; i < n; i++)
		woken += wake(&alone);
	pthread_t th;
	if (pipe(pipefd) != 0 || pthread_create(&th, NULL, waiter, NULL) != 0)
		return 2;
	for (int i = 0; i < n; i++)
		woken += wake(&shared);
	if (write(pipefd[1], "x", 1) != 1 || pthread_join(th, NULL) != 0)
		return 3;
	printf("alone %p shared %p woken %ld\n", (void *)&alone, (void *)&shared, woken);
	return 0;
}
