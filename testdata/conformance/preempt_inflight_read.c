// A thread blocked in read() on a pipe, into a buffer
// on the heap, while another computes on the heap without system calls
// and main writes to the pipe after a while. The read completes in the
// kernel (the buffer written) while the computing thread runs; its exit is
// logged at the reader's next turn. A preemption of the computing thread
// in between must not fingerprint the heap the kernel already wrote, which
// replay writes only at that exit (every recording of this program
// failed to replay so before session 32).
// flags: -pthread -O1
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static char *buf;
static volatile unsigned long *work;

static void *reader(void *arg) {
	(void)arg;
	ssize_t n = read(fds[0], buf, 64);
	return (void *)n;
}

static void *computer(void *arg) {
	(void)arg;
	unsigned long x = 1;
	for (long i = 0; i < 60000000; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		work[i & 1023] += x >> 60;
	}
	return NULL;
}

int main(void) {
	buf = calloc(1, 4096);
	work = calloc(1024, sizeof *work);
	if (pipe(fds) != 0)
		return 1;
	pthread_t r, c;
	pthread_create(&r, NULL, reader, NULL);
	pthread_create(&c, NULL, computer, NULL);
	struct timespec ts = {0, 20 * 1000 * 1000};
	nanosleep(&ts, NULL);
	if (write(fds[1], "the kernel wrote this into the heap", 35) != 35)
		return 1;
	void *n;
	pthread_join(r, &n);
	pthread_join(c, NULL);
	unsigned long sum = 0;
	for (int i = 0; i < 1024; i++)
		sum += work[i];
	printf("read %ld bytes: %s; sum %lu\n", (long)n, buf, sum);
	printf("OK\n");
	return 0;
}
