// sharedwatch.c: a reader and a writer of one file, as an LMDB reader and
// its writer. "watch FILE" maps the file read-only and shared and spins,
// with no system call, until its first long has changed three times, then
// prints the values it saw; "write FILE", beside it, writes three new
// values there with pwrite, 20 ms apart. Replay must show the reader the
// values where the recording did (it spun forever in replay when the two
// ran side by side, the writes landing between the reader's events).
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: sharedwatch watch|write FILE\n");
		return 2;
	}
	if (strcmp(argv[1], "write") == 0) {
		int fd = open(argv[2], O_RDWR);
		if (fd < 0)
			return 1;
		struct timespec ts = {0, 20 * 1000 * 1000};
		for (long v = 1; v <= 3; v++) {
			nanosleep(&ts, NULL);
			if (pwrite(fd, &v, sizeof v, 0) != sizeof v)
				return 1;
		}
		return 0;
	}
	int fd = open(argv[2], O_RDONLY);
	if (fd < 0)
		return 1;
	volatile long *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return 1;
	long last = m[0], seen[3];
	for (int k = 0; k < 3; k++) {
		while (m[0] == last)
			;
		last = seen[k] = m[0];
	}
	printf("saw %ld %ld %ld\n", seen[0], seen[1], seen[2]);
	return 0;
}
