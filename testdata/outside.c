// outside: reads, through shared mappings, what a process outside the
// recording writes: a file (argv[1]) mapped MAP_SHARED, written with write()
// and through a mapping of its own, and a SysV segment (id argv[2]). Each
// round it says "ready N", waits for a line on stdin, then prints what it
// sees.
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

int main(int argc, char **argv) {
	if (argc < 3)
		return 2;
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0)
		return 1;
	const char *f = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 0);
	const char *s = shmat(atoi(argv[2]), NULL, SHM_RDONLY);
	if (f == MAP_FAILED || s == (void *)-1)
		return 1;
	for (int round = 0; round < 2; round++) {
		printf("ready %d\n", round);
		fflush(stdout);
		char line[64];
		if (!fgets(line, sizeof line, stdin))
			return 1;
		printf("file: %.24s|%.24s\n", f, f + 4096);
		printf("shm: %.24s\n", s);
	}
	printf("OK\n");
	return 0;
}
