// watchcall: a global written N times (argv[1], default 5000) by a small
// function called from a loop, without a system call: the function has no
// room for an arrival counter after its write, the loop that calls it has.
#include <stdio.h>
#include <stdlib.h>

volatile long counter;

__attribute__((noinline)) void bump(void) { counter++; }

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 5000;
	for (long i = 0; i < n; i++)
		bump();
	printf("%ld\n", counter);
	return 0;
}
