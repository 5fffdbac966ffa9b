// buffered_writes.c: the writes the hook page records in the program
// (issue 23): write, pwrite64 and writev to a regular file in a directory
// (argv[1]) and to /dev/null (opened with O_TRUNC), dup, dup2 and dup3, N
// rounds (argv[2]); each round prints a line on stdout, whose writes the
// hook leaves to the recorder for replay to re-emit. Then the file is mapped
// shared and written again: those writes change the mapping, which the
// recorder must see, so they are made traced. What it prints depends on
// the file's bytes, read back and through the mapping.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "mix.h"

int main(int argc, char **argv) {
	if (argc < 3)
		return 2;
	int rounds = atoi(argv[2]);
	char path[4096], line[64];
	snprintf(path, sizeof path, "%s/out.bin", argv[1]);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
	for (int i = 0; i < rounds; i++) {
		int n = snprintf(line, sizeof line, "round %d\n", i);
		write(fd, line, n);
		pwrite(fd, "#", 1, 0);
		struct iovec iov[2] = {{"<>", 2}, {line, n}};
		writev(fd, iov, 2);
		int d = dup(fd);
		dup2(d, 20);
		dup3(20, 21, O_CLOEXEC);
		close(d), close(20), close(21);
		int z = open("/dev/null", O_WRONLY | O_TRUNC);
		write(z, line, n);
		close(z);
		printf("%s", line);
		fflush(stdout);
	}
	char buf[4096];
	ssize_t got;
	lseek(fd, 0, SEEK_SET);
	while ((got = read(fd, buf, sizeof buf)) > 0)
		mix(buf, got);
	printf("file %lx\n", sum);
	char *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return 1;
	for (int i = 0; i < 50; i++) {
		pwrite(fd, line, 8, i * 8);
		mix(m, 4096);
	}
	printf("mapped %lx\n", sum);
	return 0;
}
