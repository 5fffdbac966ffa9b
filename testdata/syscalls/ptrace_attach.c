// Attaches with ptrace to a child it forked: rewind refuses it with EPERM
// (rewind stays the only tracer) and warns.
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
	pid_t child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	long r = ptrace(PTRACE_ATTACH, child, NULL, NULL);
	printf("attach: %s\n", r == 0 ? "attached" : strerror(errno));
	r = ptrace(PTRACE_SEIZE, child, NULL, NULL);
	printf("seize: %s\n", r == 0 ? "seized" : strerror(errno));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return 0;
}
