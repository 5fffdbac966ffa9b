// mapfile: maps the file named by argv[1] and prints a digest of its bytes,
// so a test can delete or change the file before replaying the recording.
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
	if (argc < 2)
		return 2;
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror("open");
		return 1;
	}
	struct stat st;
	fstat(fd, &st);
	const unsigned char *p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	unsigned long h = 1469598103934665603UL;
	for (off_t i = 0; i < st.st_size; i++)
		h = (h ^ p[i]) * 1099511628211UL;
	printf("size %ld digest %016lx\n", (long)st.st_size, h);
	return 0;
}
