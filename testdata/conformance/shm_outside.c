// A file mapped MAP_SHARED changed by processes outside the recorded one (a
// shell run by system(), then dd): the program sees their bytes through the
// mapping after waiting for them.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"

int main(void) {
	char path[] = "/tmp/rewind-shm-outside-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK(ftruncate(fd, 4096) == 0);
	char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED);
	strcpy(m, "mine");
	char cmd[256];
	snprintf(cmd, sizeof cmd, "printf outside | dd of=%s bs=1 seek=100 conv=notrunc status=none", path);
	CHECK(system(cmd) == 0);
	printf("at 100: %.7s\n", m + 100);
	CHECK(memcmp(m + 100, "outside", 7) == 0);
	printf("mine: %s\n", m);
	snprintf(cmd, sizeof cmd, "printf '%%s' \"$(head -c 4 %s)-seen\" | dd of=%s bs=1 seek=2000 conv=notrunc status=none", path, path);
	CHECK(system(cmd) == 0);
	printf("at 2000: %.9s\n", m + 2000);
	CHECK(memcmp(m + 2000, "mine-seen", 9) == 0);
	int sum = 0;
	for (int i = 0; i < 4096; i++)
		sum += m[i];
	printf("sum %d\n", sum);
	munmap(m, 4096);
	close(fd);
	unlink(path);
	printf("OK\n");
	return 0;
}
