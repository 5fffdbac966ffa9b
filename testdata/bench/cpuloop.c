// cpuloop: a CPU-bound loop with no system calls (about 1 s natively), the
// case where recording and replay must cost next to nothing.
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 400000000L;
	unsigned long x = 88172645463325252UL, sum = 0;
	for (long i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		sum += x & 0xff;
	}
	printf("%lu\n", sum);
	return 0;
}
