// Preemption where the thread is inside a rep-prefixed string instruction:
// two threads clear and copy large buffers with rep stosb/rep movsb (as
// memset and memcpy do) while a 1ms interval timer signals the process, so
// the recorder interrupts them in the middle of the instruction, where rip
// stays on it while rcx, rdi and rsi move. Replay cannot stop there (a
// breakpoint or a jump only fires at the instruction's start): the
// recorder must pick another point. A third pass runs repne scasb. The
// buffers are allocated before: the loops make no system call.
// flags: -O1 -pthread
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define SIZE (4 << 20)
#define ROUNDS 150

static volatile sig_atomic_t ticks;
static void on_alarm(int sig) { (void)sig, ticks++; }

static void rep_stos(void *dst, int c, size_t n) {
	__asm__ volatile("rep stosb" : "+D"(dst), "+c"(n) : "a"(c) : "memory");
}

static void rep_movs(void *dst, const void *src, size_t n) {
	__asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

static size_t repne_scas(const char *s, size_t max) {
	size_t n = max;
	__asm__ volatile("repne scasb" : "+D"(s), "+c"(n) : "a"(0) : "memory");
	return max - n - 1;
}

static unsigned char *bufs[2][2];

static void *worker(void *arg) {
	long id = (long)arg;
	unsigned char *a = bufs[id][0], *b = bufs[id][1];
	uint64_t sum = 0;
	for (int r = 0; r < ROUNDS; r++) {
		rep_stos(a, (int)(id * 16 + r) & 0xff, SIZE);
		rep_movs(b, a, SIZE);
		a[SIZE - 1] = 0;
		memset(a, 'x', SIZE / 2);
		a[SIZE / 2] = 0;
		sum += b[r * 4096] + repne_scas((char *)a, SIZE);
	}
	return (void *)(uintptr_t)sum;
}

int main(void) {
	signal(SIGALRM, on_alarm);
	struct itimerval it = {{0, 1000}, {0, 1000}};
	setitimer(ITIMER_REAL, &it, NULL);
	for (int i = 0; i < 2; i++)
		bufs[i][0] = malloc(SIZE), bufs[i][1] = malloc(SIZE);
	pthread_t t[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	uint64_t total = 0;
	for (int i = 0; i < 2; i++) {
		void *v;
		pthread_join(t[i], &v);
		total += (uintptr_t)v;
	}
	struct itimerval off = {0};
	setitimer(ITIMER_REAL, &off, NULL);
	printf("checksum %llu, timer ticked: %s\n", (unsigned long long)total, ticks > 0 ? "yes" : "no");
	printf("OK\n");
	return 0;
}
