// work() called CALLS times (-DCALLS=N, else 10) with no system call between:
// reverse motions from its entry go to this call's caller, not the previous call.
#ifndef CALLS
#define CALLS 10
#endif
#include <stdio.h>
__attribute__((noinline)) int work(int a, int b) {
	int s = 0;
	for (int i = 0; i < a; i++)
		s += (i * b) ^ (s >> 3);
	return s;
}

int main(int argc, char **argv) {
	long total = 0;
	for (int k = 1; k <= CALLS; k++) {
		int x = (k % 7) * 3 + argc;
		total += work(x, k);
	}
	printf("%ld\n", total);
	return 0;
}
