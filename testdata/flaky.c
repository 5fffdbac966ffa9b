// flaky.c: fails once, on its Nth run: each run appends a byte to the file
// argv[1] and fails (exit 3, or with "oops" on stdout and exit 0 given a
// third argument) when the file then holds argv[2] bytes, as a test that
// fails one run in N does, but at a run a test can name. Runs at once each
// append their own byte (O_APPEND) and read where it went, so exactly one
// sees the count.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
	if (argc < 3)
		return 2;
	int fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT, 0600);
	if (fd < 0 || write(fd, "x", 1) != 1)
		return 2;
	// Where this run's byte went (the offset after it), not the size,
	// which a run at the same time may have grown since.
	long at = (long)lseek(fd, 0, SEEK_CUR);
	long n = atol(argv[2]);
	printf("run %ld of %ld\n", at, n);
	if (at == n) {
		if (argc > 3) {
			printf("oops\n");
			return 0;
		}
		fprintf(stderr, "flaky: failed on run %ld\n", at);
		return 3;
	}
	return 0;
}
