// clone(CLONE_VM | CLONE_UNTRACED), as LeakSanitizer's stop-the-world
// makes its tracer task: a child that shares the parent's memory and asks
// not to be traced. It writes into that memory; the parent reads it after
// the child ends. Recorded untraced, the child's writes were missing from
// the recording and replay diverged.
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long shared[64];

static int child(void *arg) {
	long seed = (long)arg;
	for (int i = 0; i < 64; i++)
		shared[i] = seed * (i + 1) + syscall(SYS_getppid) % 2;
	return 0;
}

int main(void) {
	size_t size = 64 << 10;
	char *stack = malloc(size);
	int bad = 0;
	for (long round = 1; round <= 3; round++) {
		pid_t pid = clone(child, stack + size, CLONE_VM | CLONE_UNTRACED | SIGCHLD, (void *)(round * 1000));
		if (pid < 0) {
			perror("clone");
			return 1;
		}
		int st;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
			bad = 1;
		long sum = 0;
		for (int i = 0; i < 64; i++)
			sum += shared[i];
		printf("round %ld: sum %ld\n", round, sum - (sum % 1000));
	}
	printf("%s\n", bad ? "FAIL" : "OK");
	return bad;
}
