// A file mapped MAP_SHARED stays coherent with write() and pwrite() on it (the
// mapping shows the bytes written), and read() sees what was stored through
// the mapping; ftruncate grows and shrinks what the mapping shows.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "check.h"

int main(void) {
	char path[] = "/tmp/rewind-shm-file-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	unlink(path);
	char page[8192];
	memset(page, 'a', sizeof page);
	CHECK(write(fd, page, sizeof page) == sizeof page);
	char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED);
	printf("mapped: %.4s\n", m);

	CHECK(pwrite(fd, "pwrite", 6, 100) == 6);
	printf("after pwrite: %.6s\n", m + 100);
	CHECK(memcmp(m + 100, "pwrite", 6) == 0);

	CHECK(lseek(fd, 5000, SEEK_SET) == 5000);
	CHECK(write(fd, "write()", 7) == 7);
	printf("after write: %.7s\n", m + 5000);
	CHECK(memcmp(m + 5000, "write()", 7) == 0);

	struct iovec iov[2] = {{"vec", 3}, {"tor", 3}};
	CHECK(pwritev(fd, iov, 2, 6000) == 6);
	printf("after pwritev: %.6s\n", m + 6000);

	memcpy(m + 200, "through the mapping", 19);
	char buf[32] = {0};
	CHECK(pread(fd, buf, 19, 200) == 19);
	printf("pread: %s\n", buf);

	m[8000] = 'Z';
	CHECK(lseek(fd, 8000, SEEK_SET) == 8000);
	CHECK(read(fd, buf, 1) == 1);
	printf("read: %c\n", buf[0]);

	// Shrinking to 4096 + 10 zeroes the rest of the second page as seen
	// through the mapping once the file grows again.
	CHECK(ftruncate(fd, 4096 + 10) == 0);
	CHECK(ftruncate(fd, 8192) == 0);
	printf("after ftruncate: %d %d %c\n", m[5000], m[8000], m[4096 + 5]);
	CHECK(m[5000] == 0 && m[8000] == 0 && m[4096 + 5] == 'a');

	// A second mapping of the same file at another offset sees the first.
	char *m2 = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 4096);
	CHECK(m2 != MAP_FAILED);
	m[4096 + 1] = 'Q';
	printf("second mapping: %c\n", m2[1]);
	CHECK(m2[1] == 'Q');
	CHECK(msync(m, 8192, MS_SYNC) == 0);
	munmap(m2, 4096);
	munmap(m, 8192);
	close(fd);
	printf("OK\n");
	return 0;
}
