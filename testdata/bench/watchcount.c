// watchcount: a global counter written N times (argv[1], default 1M), with
// a system call every K writes (argv[2], default 1000), so that the
// recording has events (and checkpoints) along the writes. Going back one
// write from the end with a watchpoint on counter must cost a bounded
// amount of replay, not a scan of every write before it.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

volatile long counter;

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 1000000L;
	long k = argc > 2 ? atol(argv[2]) : 1000L;
	for (long i = 0; i < n; i++) {
		counter++;
		if (k > 0 && i % k == 0)
			getppid();
	}
	printf("counter %ld\n", counter);
	return 0;
}
