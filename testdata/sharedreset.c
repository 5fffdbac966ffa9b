// sharedreset.c: one process writes a file through a shared mapping and
// unmaps it with no system call between; the next one, which does not
// map it yet, empties the file (ftruncate), maps it again and looks.
// "write FILE" and "reset FILE", one after the other: reset must see the
// emptied file in replay too, not what write left in replay's copy.
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: sharedreset write|reset FILE\n");
		return 2;
	}
	int fd = open(argv[2], O_RDWR | O_CREAT, 0644);
	if (fd < 0)
		return 1;
	int reset = strcmp(argv[1], "reset") == 0;
	if (reset && ftruncate(fd, 0) != 0)
		return 1;
	if (ftruncate(fd, 4096) != 0)
		return 1;
	char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return 1;
	if (!reset) {
		strcpy(m, "written");
		munmap(m, 4096);
		return 0;
	}
	printf("reset sees %s\n", m[0] ? "what was written" : "an empty file");
	return 0;
}
