// buffered_sharedro.c: a process that maps a file read-only MAP_SHARED, as
// glibc maps gconv-modules.cache for setlocale and iconv (issue 23). Its
// writes to other files and its unmappings elsewhere stay buffered; the
// write to the mapped file (through another descriptor) and the unmapping
// of the shared mapping are the recorder's, which follows what they change.
// argv[1] is a directory, argv[2] the number of rounds. What it prints
// depends on the mapped bytes after the write. With a third argument,
// "exec", a parent maps the file first and runs all that in a child it
// execs, then prints what its own mapping shows: the child's mapping is of
// an object the recorder already follows.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* mapFile writes the seven bytes of text into path and maps it read-only
   and shared, or returns NULL. */
static const char *mapFile(const char *path, const char *text) {
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, text, 7) != 7)
		return NULL;
	close(fd);
	int ro = open(path, O_RDONLY);
	const char *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, ro, 0);
	return m == MAP_FAILED ? NULL : m;
}

int main(int argc, char **argv) {
	if (argc < 3) {
		fprintf(stderr, "usage: buffered_sharedro DIR N [exec]\n");
		return 2;
	}
	char mapped[4096], out[4096];
	snprintf(mapped, sizeof mapped, "%s/mapped", argv[1]);
	snprintf(out, sizeof out, "%s/out", argv[1]);
	int n = atoi(argv[2]);
	if (argc > 3 && strcmp(argv[3], "exec") == 0) {
		const char *m = mapFile(mapped, "parent.");
		if (m == NULL)
			return 1;
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			execl("/proc/self/exe", argv[0], argv[1], argv[2], (char *)NULL);
			_exit(127);
		}
		int status;
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			return 1;
		printf("parent mapped %.7s\n", m);
		return 0;
	}
	const char *m = mapFile(mapped, "before.");
	if (m == NULL)
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
