// buffered.c: system calls the hook page records in the program (issue 23,
// item 1): clock_gettime (through the vDSO), getppid and fstat (through
// glibc's wrappers), N times each in a loop, with a global written after
// each round, so that a debugger can stop, watch and go back across them.
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static long total;

static void round_(int i) {
	struct timespec ts;
	struct stat st;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	long p = getppid();
	fstat(1, &st);
	total += (p > 0) + (ts.tv_nsec >= 0) + (st.st_mode != 0) + i * 0;
}

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	for (int i = 0; i < n; i++)
		round_(i);
	printf("rounds %d total %ld\n", n, total);
	return 0;
}
