// longrun: computes between cheap system calls, so a recording has many
// events spread over a long run (defaults: 100k calls, about 10 s natively).
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
	long calls = argc > 1 ? atol(argv[1]) : 100000;
	long work = argc > 2 ? atol(argv[2]) : 60000;
	unsigned long x = 88172645463325252UL, sum = 0;
	for (long i = 0; i < calls; i++) {
		for (long j = 0; j < work; j++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		sum += (x & 1) + (getppid() & 1);
	}
	printf("%lu\n", sum);
	return 0;
}
