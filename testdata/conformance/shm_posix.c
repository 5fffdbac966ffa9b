// POSIX shared memory (shm_open on /dev/shm): sized with ftruncate, mapped
// twice, written through one mapping and with write(), read through the
// other and with pread, then unlinked.
// flags: -lrt
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"

int main(void) {
	char name[64];
	snprintf(name, sizeof name, "/rewind-conf-%d", (int)getpid());
	int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
	CHECK(fd >= 0);
	CHECK(ftruncate(fd, 8192) == 0);
	char *a = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	char *b = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(a != MAP_FAILED && b != MAP_FAILED);
	strcpy(a + 4096, "posix shm");
	printf("b sees: %s\n", b + 4096);
	CHECK(write(fd, "written", 7) == 7);
	printf("b sees: %.7s\n", b);
	char buf[16] = {0};
	CHECK(pread(fd, buf, 9, 4096) == 9);
	printf("pread: %s\n", buf);
	CHECK(shm_unlink(name) == 0);
	munmap(a, 8192);
	munmap(b, 8192);
	close(fd);
	printf("OK\n");
	return 0;
}
