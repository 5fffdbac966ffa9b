// sortloop.c N: three threads each sort a fresh copy of the same eight
// numbers N times (qsort, no system call in the loop). Every iteration
// passes the same points of the sort with the same registers and stack
// window: only the loop's counter, in a frame further up, tells them
// apart, so a preemption there must carry it (TestChaosRepeatedSort).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long n, total[3];

static int cmp(const void *a, const void *b) {
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static void *work(void *arg) {
	long id = (long)arg;
	int base[8] = {5, 3, 7, 1, 8, 2, 6, 4};
	int a[8];
	long sum = 0;
	for (long i = 0; i < n; i++) {
		memcpy(a, base, sizeof a);
		qsort(a, 8, sizeof a[0], cmp);
		sum += a[i % 8];
	}
	total[id] = sum;
	return NULL;
}

int main(int argc, char **argv) {
	n = argc > 1 ? atol(argv[1]) : 2000000;
	pthread_t t[3];
	for (long i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, work, (void *)i);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("%ld %ld %ld\n", total[0], total[1], total[2]);
	return 0;
}
