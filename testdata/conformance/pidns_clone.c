// clone(CLONE_NEWPID) directly (glibc's clone(), no unshare): the child is
// pid 1 of its namespace from its first instruction. The kernel writes the
// child's pid twice, each in the namespace of the one who reads it:
// CLONE_PARENT_SETTID in the parent's memory (the pid clone returns),
// CLONE_CHILD_SETTID in the child's (1). The child forks a grandchild and
// reports its status; the parent's SIGCHLD carries the child's pid as the
// parent sees it. Without the privilege, see pidns_unshare.c.
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t ptid, ctid;

static int child_main(void *arg) {
	(void)arg;
	printf("child: pid %d ppid %d ctid %d\n", getpid(), getppid(), ctid);
	pid_t g = fork();
	if (g == 0) {
		printf("grandchild: pid %d ppid %d\n", getpid(), getppid());
		_exit(3);
	}
	int st;
	pid_t w = waitpid(g, &st, 0);
	printf("child: grandchild %d exit %d\n", w, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return w == 2 && getpid() == 1 && ctid == 1 ? 9 : 1;
}

int main(void) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);

	size_t size = 256 << 10;
	char *stack = malloc(size);
	int flags = CLONE_NEWPID | CLONE_PARENT_SETTID | CLONE_CHILD_SETTID | SIGCHLD;
	pid_t c = clone(child_main, stack + size, flags, NULL, &ptid, NULL, &ctid);
	if (c < 0 && errno == EPERM)
		c = clone(child_main, stack + size, flags | CLONE_NEWUSER, NULL, &ptid, NULL, &ctid);
	if (c < 0) {
		printf("no pid namespace here: %s\nOK\n", strerror(errno));
		return 0;
	}
	printf("parent: ptid is the pid clone returned %d, ctid untouched %d\n", ptid == c, ctid == 0);

	siginfo_t si;
	if (sigwaitinfo(&chld, &si) != SIGCHLD) {
		perror("sigwaitinfo");
		return 1;
	}
	printf("parent: SIGCHLD from the child %d, code %d, status %d\n", si.si_pid == c, si.si_code, si.si_status);
	int st;
	if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 9) {
		printf("bad child status %#x\n", st);
		return 1;
	}
	printf("OK\n");
	return 0;
}
