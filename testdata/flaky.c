// flaky.c: fails once, on its Nth run: each run appends a byte to the file
// argv[1] and fails (exit 3, or with "oops" on stdout and exit 0 given a
// third argument) when the file then holds argv[2] bytes, as a test that
// fails one run in N does, but at a run a test can name. Runs at once each
// append their own byte (O_APPEND), so exactly one sees the count.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
	if (argc < 3)
		return 2;
	int fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT, 0600);
	if (fd < 0 || write(fd, "x", 1) != 1)
		return 2;
	struct stat st;
	fstat(fd, &st);
	long n = atol(argv[2]);
	printf("run %ld of %ld\n", (long)st.st_size, n);
	if (st.st_size == n) {
		if (argc > 3) {
			printf("oops\n");
			return 0;
		}
		fprintf(stderr, "flaky: failed on run %ld\n", (long)st.st_size);
		return 3;
	}
	return 0;
}
