// mappastend.c: two small files (DIR/small and DIR/next, 100 bytes each),
// each mapped whole once, then small mapped privately twice a round: two
// pages of it, whose second lies past the file's end and faults (SIGBUS,
// which it catches), and its 100 bytes. Replay maps small stored files
// from one memfd (engine/replay/packfile.go), where next lies right past
// small: the first mapping must still fault there, the second read the
// file's bytes.
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static sigjmp_buf jb;

static void onbus(int sig) {
	(void)sig;
	siglongjmp(jb, 1);
}

/* make writes 100 bytes of c to DIR/name, maps them and returns the first. */
static int make(const char *dir, const char *name, char c) {
	char path[4096], buf[100];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	memset(buf, c, sizeof buf);
	if (fd < 0 || write(fd, buf, sizeof buf) != sizeof buf)
		return -1;
	char *m = mmap(NULL, sizeof buf, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	return m == MAP_FAILED ? -1 : m[0];
}

int main(int argc, char **argv) {
	if (argc < 2)
		return 2;
	if (make(argv[1], "small", 'x') != 'x' || make(argv[1], "next", 'y') != 'y')
		return 2;
	char path[4096];
	snprintf(path, sizeof path, "%s/small", argv[1]);
	int fd;
	signal(SIGBUS, onbus);
	for (int i = 0; i < 3; i++) {
		fd = open(path, O_RDONLY);
		volatile char *m = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
		if (m == MAP_FAILED)
			return 3;
		int sum = 0;
		for (int j = 0; j < 4096; j++)
			sum += m[j];
		if (sigsetjmp(jb, 1) == 0)
			printf("no fault past the end (%d)\n", sum + m[4096]);
		else
			printf("fault past the end (%d)\n", sum);
		munmap((void *)m, 8192);
		fd = open(path, O_RDONLY);
		m = mmap(NULL, 100, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
		if (m == MAP_FAILED)
			return 3;
		printf("bytes %c%c\n", m[0], m[99]);
		munmap((void *)m, 100);
	}
	return 0;
}
