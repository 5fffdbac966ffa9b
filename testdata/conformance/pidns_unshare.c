// unshare(CLONE_NEWPID), then fork: the child is pid 1 of the new
// namespace and sees no parent; it starts a thread (tid 2), forks a
// grandchild (pid 3) and waits for the grandchild's status. The recorder sees
// host pids, the program namespace pids: each event must be the right
// thread's, and replay must find it. Without the privilege for a pid
// namespace (not root, no user namespaces), a user namespace is tried, then
// the program says so and passes.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void *thread_main(void *arg) {
	(void)arg;
	printf("thread: tid %ld pid %d\n", (long)syscall(SYS_gettid), getpid());
	return NULL;
}

static int init_main(void) {
	printf("child: pid %d ppid %d\n", getpid(), getppid());
	pthread_t th;
	if (pthread_create(&th, NULL, thread_main, NULL) != 0)
		return 10;
	pthread_join(th, NULL);
	pid_t g = fork();
	if (g < 0)
		return 11;
	if (g == 0) {
		printf("grandchild: pid %d ppid %d\n", getpid(), getppid());
		_exit(5);
	}
	printf("child: forked %d\n", g);
	int st;
	pid_t w = waitpid(g, &st, 0);
	printf("child: waited %d, exit %d\n", w, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return w == g && WIFEXITED(st) && WEXITSTATUS(st) == 5 ? 7 : 12;
}

int main(void) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (unshare(CLONE_NEWPID) != 0 && (errno != EPERM || unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0)) {
		printf("no pid namespace here: %s\nOK\n", strerror(errno));
		return 0;
	}
	pid_t me = getpid();
	pid_t c = fork();
	if (c < 0) {
		perror("fork");
		return 1;
	}
	if (c == 0)
		_exit(init_main());
	int st;
	if (waitpid(c, &st, 0) != c || !WIFEXITED(st)) {
		printf("bad wait\n");
		return 1;
	}
	printf("parent: pid unchanged %d, child exit %d\n", getpid() == me, WEXITSTATUS(st));
	if (WEXITSTATUS(st) != 7)
		return 1;
	printf("OK\n");
	return 0;
}
