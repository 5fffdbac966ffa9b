// MAP_SHARED mappings a forked child writes to: anonymous shared memory and
// /dev/zero mapped shared. The parent reads the child's bytes after waiting.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

int main(void) {
	char *anon = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(anon != MAP_FAILED);
	int zfd = open("/dev/zero", O_RDWR);
	CHECK(zfd >= 0);
	char *zero = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, zfd, 0);
	CHECK(zero != MAP_FAILED);
	close(zfd);
	strcpy(anon, "parent");
	strcpy(zero, "parent");
	pid_t pid = fork();
	if (pid == 0) {
		strcpy(anon + 4096, "child wrote anon");
		strcpy(zero + 4096, "child wrote zero");
		anon[0] = 'P';
		_exit(0);
	}
	int st;
	CHECK(waitpid(pid, &st, 0) == pid);
	printf("anon: %s %s\n", anon, anon + 4096);
	printf("zero: %s %s\n", zero, zero + 4096);
	CHECK(strcmp(anon + 4096, "child wrote anon") == 0 && strcmp(zero + 4096, "child wrote zero") == 0);
	printf("OK\n");
	return 0;
}
