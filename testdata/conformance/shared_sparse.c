// A huge anonymous shared mapping (100 GiB, MAP_NORESERVE) with a few pages
// written, shared with a child: the recording compares what the region
// holds, not what it maps, so blocking calls stay cheap; the child's write
// to a page reaches the parent.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

int main(void) {
	const size_t size = 100UL << 30;
	char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(p != MAP_FAILED);
	p[0] = 1;
	p[size / 2] = 2;
	for (int i = 0; i < 20; i++)
		usleep(100); // blocking calls: each compares the shared memory
	int fds[2];
	CHECK(pipe(fds) == 0);
	pid_t child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		p[size - 1] = 3;
		p[size / 2] += 40;
		_exit(write(fds[1], "x", 1) == 1 ? 0 : 1);
	}
	char c;
	CHECK(read(fds[0], &c, 1) == 1); // the child has written
	int status;
	CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	printf("sum %d\n", p[0] + p[size / 2] + p[size - 1] + p[size / 4]);
	CHECK(p[size - 1] == 3 && p[size / 2] == 42);
	CHECK(munmap(p, size) == 0);
	printf("OK\n");
	return 0;
}
