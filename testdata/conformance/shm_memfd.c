// memfd_create, ftruncate, the memfd mapped MAP_SHARED at two addresses
// (a write through one shows in the other) and at an offset; write() and
// pread() on the memfd agree with the mappings.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"

int main(void) {
	int fd = memfd_create("rewind-conf", MFD_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(ftruncate(fd, 3 * 4096) == 0);
	char *a = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	char *b = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	char *c = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 2 * 4096);
	CHECK(a != MAP_FAILED && b != MAP_FAILED && c != MAP_FAILED && a != b);
	strcpy(a + 10, "written through a");
	printf("b sees: %s\n", b + 10);
	CHECK(strcmp(b + 10, "written through a") == 0);
	strcpy(b + 2 * 4096 + 7, "third page");
	printf("c sees: %s\n", c + 7);
	printf("a sees: %s\n", a + 2 * 4096 + 7);
	CHECK(pwrite(fd, "by pwrite", 10, 4096) == 10);
	printf("a sees: %s, b sees: %s\n", a + 4096, b + 4096);
	CHECK(strcmp(a + 4096, "by pwrite") == 0);
	char buf[32] = {0};
	CHECK(pread(fd, buf, 17, 10) == 17);
	printf("pread: %s\n", buf);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	CHECK(write(fd, "WRITE", 5) == 5);
	printf("a sees: %.5s\n", a);
	// Growing the memfd and mapping it again: the new part reads zero.
	CHECK(ftruncate(fd, 4 * 4096) == 0);
	char *d = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(d != MAP_FAILED);
	printf("d: %s %d\n", d + 10, d[3 * 4096]);
	d[3 * 4096] = 'x';
	munmap(a, 3 * 4096);
	munmap(b, 3 * 4096);
	munmap(c, 4096);
	munmap(d, 4 * 4096);
	CHECK(pread(fd, buf, 1, 3 * 4096) == 1);
	printf("after unmapping: %c\n", buf[0]);
	close(fd);
	printf("OK\n");
	return 0;
}
