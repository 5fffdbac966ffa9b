// lastwriter: a global written N times by a loop (argv[1], default 5000),
// then once more by another instruction, then read N times by a loop that
// writes another global, all without a system call: going back from the
// end with a watchpoint on counter must find the last write, which is not
// the busy loop's, then the loop's writes one by one.
#include <stdio.h>
#include <stdlib.h>

volatile long counter, other;

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 5000;
	for (long i = 0; i < n; i++)
		counter++;
	counter = counter * 2 + 1;
	for (long i = 0; i < n; i++)
		other += counter;
	printf("%ld %ld\n", counter, other);
	return 0;
}
