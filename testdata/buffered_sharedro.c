// buffered_sharedro.c: a process that maps a file read-only MAP_SHARED, as
// glibc maps gconv-modules.cache for setlocale and iconv (issue 23). Its
// writes to other files and its unmappings elsewhere stay buffered; the
// write to the mapped file (through another descriptor) and the unmapping
// of the shared mapping are the recorder's, which follows what they change.
// argv[1] is a directory, argv[2] the number of rounds. What it prints
// depends on the mapped bytes after the write.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv) {
	if (argc < 3) {
		fprintf(stderr, "usage: buffered_sharedro DIR N\n");
		return 2;
	}
	char mapped[4096], out[4096];
	snprintf(mapped, sizeof mapped, "%s/mapped", argv[1]);
	snprintf(out, sizeof out, "%s/out", argv[1]);
	int n = atoi(argv[2]);
	int fd = open(mapped, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "before.", 7) != 7)
		return 1;
	close(fd);
	int ro = open(mapped, O_RDONLY);
	const char *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, ro, 0);
	if (m == MAP_FAILED)
		return 1;
	int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	long sum = 0;
	for (int i = 0; i < n; i++) {
		char line[64];
		int len = snprintf(line, sizeof line, "line %d of the output file\n", i);
		if (write(o, line, len) != len)
			return 1;
		char *scratch = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		scratch[0] = (char)i;
		sum += scratch[0] + m[i % 7];
		munmap(scratch, 8192);
	}
	int rw = open(mapped, O_WRONLY);
	if (rw < 0 || pwrite(rw, "after!", 6, 0) != 6)
		return 1;
	printf("sum %ld mapped %.7s\n", sum, m);
	munmap((void *)m, 4096);
	char *again = mmap((void *)m, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	printf("again %d\n", again == m && again[0] == 0);
	return 0;
}
