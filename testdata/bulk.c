// bulk.c: reads N blocks (default 600) of 4 KiB of random bytes, a few
// milliseconds of running whose trace holds many frames of incompressible
// events: the tests that cut and damage traces pick frames in it. With
// "forever" it keeps reading until it is killed, for the tests of a
// recording that must stop when its trace cannot be written.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

int main(int argc, char **argv) {
	int forever = argc > 1 && strcmp(argv[1], "forever") == 0;
	long n = argc > 1 && !forever ? atol(argv[1]) : 600;
	static unsigned char buf[4096];
	unsigned long sum = 0;
	for (long i = 0; forever || i < n; i++) {
		if (getrandom(buf, sizeof buf, 0) != sizeof buf) {
			perror("getrandom");
			return 1;
		}
		sum += buf[0];
	}
	printf("read %ld blocks\n", n);
	return sum == 0; // keep the loop's work
}
