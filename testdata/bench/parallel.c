// parallel: N child processes that compute side by side, M loop iterations
// each, as `make -j` runs its compilers; the parent waits for them.
//
//	parallel N M
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 2;
	long m = argc > 2 ? atol(argv[2]) : 100000000L;
	for (int k = 0; k < n; k++) {
		if (fork() == 0) {
			unsigned long x = 88172645463325252UL + k, sum = 0;
			for (long i = 0; i < m; i++) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				sum += x & 0xff;
			}
			_exit(sum == 42);
		}
	}
	while (wait(NULL) > 0)
		;
	return 0;
}
