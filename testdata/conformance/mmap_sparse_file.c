// A sparse file of 1 TiB mapped MAP_SHARED: a few pages hold data (written
// before the mapping and through pwrite after it), the rest are holes. The
// recording reads what the file holds, not what it maps: the holes read
// zero in replay as in the recording.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"

int main(void) {
	const off_t size = 1L << 40;
	char path[] = "/tmp/rewind-sparse-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	unlink(path);
	CHECK(ftruncate(fd, size) == 0);
	CHECK(pwrite(fd, "before", 6, size / 4) == 6);
	char *p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED);
	int holes = p[0] + p[size / 2] + p[size - 1];
	for (int i = 0; i < 20; i++)
		usleep(100); // blocking calls: each compares the mapping
	CHECK(pwrite(fd, "after", 5, size / 2 + 4096 * 3) == 5);
	printf("%d %.6s %.5s\n", holes, p + size / 4, p + size / 2 + 4096 * 3);
	CHECK(holes == 0 && p[size / 4] == 'b' && p[size / 2 + 4096 * 3] == 'a');
	CHECK(munmap(p, size) == 0);
	printf("OK\n");
	return 0;
}
