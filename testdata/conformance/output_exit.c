// Output order at exit: the process ends (exit_group) while one thread is
// in a write larger than the pipe (shrunk to one page) and another writes
// lines. What of the large write reached the stream before the end is what
// replay must re-emit, and a short write whose exit was never reached must
// not be lost.
// reader: slow
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char big[1 << 20];

static void *large(void *arg) {
	(void)arg;
	for (;;)
		write(2, big, sizeof big);
	return 0;
}

static void *lines(void *arg) {
	(void)arg;
	char line[32];
	for (int i = 0;; i++) {
		int n = snprintf(line, sizeof line, "line %d\n", i);
		write(2, line, n);
	}
	return 0;
}

int main(void) {
	fcntl(2, F_SETPIPE_SZ, 4096);
	for (size_t i = 0; i < sizeof big; i += 64) {
		memset(big + i, 'a' + (i / 64) % 26, 63);
		big[i + 63] = '\n';
	}
	pthread_t t;
	pthread_create(&t, 0, large, 0);
	pthread_create(&t, 0, lines, 0);
	for (int i = 0; i < 100; i++)
		sched_yield();
	write(1, "OK\n", 3);
	return 0;
}
