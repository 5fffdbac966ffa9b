/* buffered_mapfiles DIR N: maps DIR/big (whose call patches the site of
   the mappings that follow), then each of DIR/f0 … DIR/f(N-1) privately,
   read only, twice (as git maps its loose objects), summing their bytes; then, in a breakpoint's reach (mapped_at), keeps
   one mapping of f0 open. A test checks that the hook records the
   mappings of files the recorder has not stored, with no stop, and that
   replay maps the same bytes, from the files or from the trace. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* mapped_at is called with the kept mapping of f0. */
__attribute__((noinline)) void mapped_at(const unsigned char *p) { __asm__ volatile("" : : "r"(p) : "memory"); }

static unsigned long sum_file(const char *path, int keep) {
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_size == 0) {
		close(fd);
		return 0;
	}
	const unsigned char *p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return 0;
	unsigned long sum = 0;
	for (off_t i = 0; i < st.st_size; i++)
		sum = sum * 31 + p[i];
	if (keep)
		mapped_at(p);
	munmap((void *)p, st.st_size);
	return sum;
}

int main(int argc, char **argv) {
	if (argc < 3)
		return 2;
	int n = atoi(argv[2]);
	char path[4096];
	snprintf(path, sizeof path, "%s/big", argv[1]);
	unsigned long sum = sum_file(path, 0);
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < n; i++) {
			snprintf(path, sizeof path, "%s/f%d", argv[1], i);
			sum = sum * 7 + sum_file(path, round == 1 && i == 0);
		}
	printf("sum %lx\n", sum);
	return 0;
}
