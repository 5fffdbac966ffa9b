// Signals taken while a call waits with a temporary mask (pselect6, ppoll,
// epoll_pwait, as make -j waits for its children): SIGCHLD and SIGUSR1 are
// blocked, each call unblocks one while it waits, the handler runs, and
// the thread's own mask is back afterwards. Replay once kept the signal
// pending and diverged ("expected signal SIGCHLD, got a system call").
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t got;

static void handler(int sig) { got = sig; }

static int blocked(int sig) {
	sigset_t now;
	sigprocmask(SIG_BLOCK, NULL, &now);
	return sigismember(&now, sig);
}

static void child_signals(int sig) {
	if (fork() == 0) {
		usleep(20000);
		if (sig != SIGCHLD)
			kill(getppid(), sig);
		_exit(0);
	}
}

int main(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sigset_t block, onlychld, onlyusr1;
	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, NULL);
	sigfillset(&onlychld);
	sigdelset(&onlychld, SIGCHLD);
	sigfillset(&onlyusr1);
	sigdelset(&onlyusr1, SIGUSR1);
	setvbuf(stdout, NULL, _IOLBF, 0);
	int bad = 0;

	for (int i = 0; i < 3; i++) {
		got = 0;
		child_signals(SIGCHLD);
		int pfd[2];
		pipe(pfd);
		fd_set rd;
		FD_ZERO(&rd);
		FD_SET(pfd[0], &rd);
		int r = pselect(pfd[0] + 1, &rd, NULL, NULL, NULL, &onlychld);
		int e = errno;
		printf("pselect %d: %d %s, handler saw %s, SIGCHLD blocked after: %d\n", i, r, strerror(e), got ? strsignal(got) : "nothing", blocked(SIGCHLD));
		bad |= r != -1 || e != EINTR || got != SIGCHLD || !blocked(SIGCHLD);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		close(pfd[0]);
		close(pfd[1]);
	}

	got = 0;
	child_signals(SIGUSR1);
	int r = ppoll(NULL, 0, NULL, &onlyusr1);
	int e = errno;
	printf("ppoll: %d %s, handler saw %s, SIGUSR1 blocked after: %d\n", r, strerror(e), got == SIGUSR1 ? "SIGUSR1" : "another", blocked(SIGUSR1));
	bad |= r != -1 || e != EINTR || got != SIGUSR1 || !blocked(SIGUSR1);
	// SIGCHLD of that child arrives while blocked: take it under a mask too.
	int ep = epoll_create1(0);
	struct epoll_event ev;
	got = 0;
	r = epoll_pwait(ep, &ev, 1, -1, &onlychld);
	e = errno;
	printf("epoll_pwait: %d %s, handler saw %s, SIGCHLD blocked after: %d\n", r, strerror(e), got == SIGCHLD ? "SIGCHLD" : "another", blocked(SIGCHLD));
	bad |= r != -1 || e != EINTR || got != SIGCHLD || !blocked(SIGCHLD);
	while (waitpid(-1, NULL, 0) > 0)
		;
	printf("%s\n", bad ? "FAIL" : "OK");
	return bad;
}
