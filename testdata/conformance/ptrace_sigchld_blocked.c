// A tracer with SIGCHLD blocked while its two tracees stop, one after the
// other, as gdb blocks it around its waitpid calls: the two SIGCHLDs are
// pending (one, standard signals do not queue) when it unblocks SIGCHLD,
// and its handler must run then, even though the tracer computes in user
// code right after (rewind then preempts it at a point of its own).
// Under rewind the first SIGCHLD, re-sent by the recorder, arrived while
// the recorder stepped the tracer to a preemption point and was held
// again, but marked as still on its way: it was never sent again, and the
// tracer waited for its handler's byte forever.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sigchld_pipe.h"

// tracee starts a child that stops for its tracer and then makes system
// calls until it is killed.
static pid_t tracee(void) {
	pid_t p = fork();
	if (p == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		for (;;)
			getppid();
	}
	return p;
}

// stopOf waits for a stop of child, SIGCHLD blocked; it says whether it
// is a system call stop.
static int stopOf(pid_t child) {
	int st;
	return waitpid(child, &st, __WALL) == child && WIFSTOPPED(st) && WSTOPSIG(st) == (SIGTRAP | 0x80);
}

static volatile unsigned long sink;

int main(void) {
	setvbuf(stdout, NULL, _IONBF, 0);
	if (!watchChildren())
		return 1;
	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);

	pid_t kids[2];
	for (int i = 0; i < 2; i++) {
		kids[i] = tracee();
		int st;
		waitpid(kids[i], &st, 0);
		ptrace(PTRACE_SETOPTIONS, kids[i], NULL, (void *)PTRACE_O_TRACESYSGOOD);
	}
	int rounds = 0, woken = 0;
	for (; rounds < 100; rounds++) {
		char buf[16];
		while (read(sigpipe[0], buf, sizeof buf) > 0) {
		}
		for (int i = 0; i < 2; i++)
			ptrace(PTRACE_SYSCALL, kids[i], NULL, NULL);
		// Both stop while SIGCHLD is blocked here.
		struct timespec ms = {0, 2000000};
		nanosleep(&ms, NULL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		for (unsigned long k = 0; k < 200000; k++)
			sink += k;
		// The handler ran at the unblock, or runs in the poll (which then
		// fails with EINTR: a stop that came late).
		struct pollfd p = {.fd = sigpipe[0], .events = POLLIN};
		int n;
		while ((n = poll(&p, 1, -1)) < 0 && errno == EINTR) {
		}
		woken += n == 1;
		sigprocmask(SIG_BLOCK, &chld, NULL);
		if (!stopOf(kids[0]) || !stopOf(kids[1]))
			break;
	}
	for (int i = 0; i < 2; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, __WALL);
	}
	printf("rounds %d, woken %d\n", rounds, woken);
	if (rounds != 100 || woken != 100)
		return 1;
	printf("OK\n");
	return 0;
}
