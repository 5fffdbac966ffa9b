// flags: -pthread
// A thread other than the main one execs while the others wait (the main
// thread in pthread_join, another in a read of a pipe nobody writes): the
// kernel ends them and gives the exec'ing thread the main thread's tid. A
// failed exec from a thread first leaves everything as it was. The new
// image is this program again, which checks it is its process's only
// thread, with the process's pid as its tid.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check.h"

static int fds[2];
static char self[4096];

static void *reader(void *arg) {
	char c;
	(void)arg;
	(void)read(fds[0], &c, 1); // never returns: the exec ends it
	return NULL;
}

static void *execer(void *arg) {
	(void)arg;
	char *bad[] = {"/nonexistent/rewind-exec-thread", NULL};
	execv(bad[0], bad);
	CHECK(errno == ENOENT);
	char *av[] = {self, "after", NULL};
	execv(self, av);
	printf("FAIL exec: %s\n", strerror(errno));
	exit(1);
}

int main(int argc, char **argv) {
	if (argc > 1 && strcmp(argv[1], "after") == 0) {
		CHECK(syscall(SYS_gettid) == getpid());
		FILE *f = fopen("/proc/self/status", "r");
		CHECK(f != NULL);
		char line[256];
		int threads = 0;
		while (fgets(line, sizeof line, f))
			if (sscanf(line, "Threads: %d", &threads) == 1)
				break;
		fclose(f);
		printf("after exec: %d thread(s)\n", threads);
		CHECK(threads == 1);
		printf("OK\n");
		return 0;
	}
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	CHECK(n > 0);
	self[n] = 0;
	CHECK(pipe(fds) == 0);
	printf("before exec\n");
	fflush(stdout);
	pthread_t r, e;
	CHECK(pthread_create(&r, NULL, reader, NULL) == 0);
	CHECK(pthread_create(&e, NULL, execer, NULL) == 0);
	pthread_join(e, NULL);
	printf("FAIL: the exec returned\n");
	return 1;
}
