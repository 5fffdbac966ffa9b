// A tracer's event loops as gdb's: it resumes its tracee with
// PTRACE_SYSCALL, looks for its stop with waitpid(WNOHANG) while SIGCHLD
// is blocked, and then either sleeps in poll on a pipe that its SIGCHLD
// handler writes to (gdb's async loop), or in sigsuspend with SIGCHLD
// unblocked only there (its sync loop). Other threads of the tracer sleep
// in futexes meanwhile (gdb's workers). The SIGCHLD of the tracee's stop
// may come at any of those points: before the block, in the waitpid,
// between the unblock and the poll, or in the wait; in each case the wait
// must end. Under rewind a SIGCHLD held while the tracer stepped to a
// preemption point was never sent again, and gdb slept forever.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sigchld_pipe.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int quit;

// worker sleeps on a condition variable until the end, as gdb's idle
// worker threads do.
static void *worker(void *arg) {
	(void)arg;
	pthread_mutex_lock(&mu);
	while (!quit)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return NULL;
}

// nextStop resumes the child to its next system call stop and waits for
// that stop as gdb's event loops do (suspend: the sync one). It returns
// the wait status.
static int nextStop(pid_t child, int suspend) {
	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (ptrace(PTRACE_SYSCALL, child, NULL, NULL) != 0)
		return -1;
	for (;;) {
		int st;
		sigprocmask(SIG_BLOCK, &chld, &old);
		pid_t got = waitpid(child, &st, WNOHANG | __WALL);
		if (got == 0 && suspend) {
			sigsuspend(&old);
			got = waitpid(child, &st, WNOHANG | __WALL);
		}
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (got == child)
			return st;
		if (got < 0)
			return -1;
		struct pollfd p = {.fd = sigpipe[0], .events = POLLIN};
		if (poll(&p, 1, 0) == 0)
			poll(&p, 1, -1);
		char buf[16];
		while (read(sigpipe[0], buf, sizeof buf) > 0) {
		}
	}
}

int main(void) {
	setvbuf(stdout, NULL, _IONBF, 0);
	if (!watchChildren())
		return 1;
	// The workers block every signal, as gdb's do: SIGCHLD is the main
	// thread's alone (a process-wide signal goes to a thread that does
	// not block it).
	sigset_t all, mine;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &mine);
	pthread_t w[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&w[i], NULL, worker, NULL);
	pthread_sigmask(SIG_SETMASK, &mine, NULL);

	pid_t child = fork();
	if (child == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		for (int i = 0; i < 200; i++)
			if (write(1, "", 0) != 0)
				_exit(3);
		_exit(0);
	}
	int st;
	waitpid(child, &st, 0);
	ptrace(PTRACE_SETOPTIONS, child, NULL, (void *)PTRACE_O_TRACESYSGOOD);
	int stops = 0;
	for (;;) {
		st = nextStop(child, stops % 3 == 2);
		if (st < 0 || !WIFSTOPPED(st))
			break;
		stops++;
	}
	pthread_mutex_lock(&mu);
	quit = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	// 200 writes, an entry and an exit stop each, and the exit_group's entry.
	printf("stops %d, child %s %d\n", stops, WIFEXITED(st) ? "exited" : "ended", WIFEXITED(st) ? WEXITSTATUS(st) : st);
	if (stops != 401 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 1;
	printf("OK\n");
	return 0;
}
