// Output order: threads write lines to stdout and stderr at the same time,
// one of them a write larger than the pipe, into a pipe shrunk to one page
// so that writers block on it and wait for the reader. Replay must re-emit
// every byte in the order it reached each stream.
// reader: slow
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char big[96 * 1024];

static void *lines(void *arg) {
	long id = (long)arg;
	int fd = id % 3 == 2 ? 2 : 1;
	char line[64];
	for (int i = 0; i < 150; i++) {
		int n = snprintf(line, sizeof line, "thread %ld line %d\n", id, i);
		if (write(fd, line, n) != n)
			return (void *)1;
	}
	return 0;
}

static void *large(void *arg) {
	(void)arg;
	for (size_t done = 0; done < sizeof big;) {
		ssize_t n = write(1, big + done, sizeof big - done);
		if (n <= 0)
			return (void *)1;
		done += n;
	}
	return 0;
}

int main(void) {
	// Ignored when stdout or stderr is not a pipe.
	fcntl(1, F_SETPIPE_SZ, 4096);
	fcntl(2, F_SETPIPE_SZ, 4096);
	for (size_t i = 0; i < sizeof big; i += 64) {
		memset(big + i, 'a' + (i / 64) % 26, 63);
		big[i + 63] = '\n';
	}
	pthread_t t[7];
	for (long i = 0; i < 6; i++)
		pthread_create(&t[i], 0, lines, (void *)i);
	pthread_create(&t[6], 0, large, 0);
	long bad = 0;
	for (int i = 0; i < 7; i++) {
		void *r;
		pthread_join(t[i], &r);
		bad += (long)r;
	}
	if (bad)
		return 1;
	write(1, "OK\n", 3);
	return 0;
}
