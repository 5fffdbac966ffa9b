// A process stops itself and its child continues it: with raise(SIGSTOP),
// then raise(SIGTSTP) (in a process group of its own, which is not
// orphaned: its parent is in another group of the session), then
// raise(SIGTSTP) with a handler, which runs instead of a stop. The child
// cannot see the stop: it sends SIGCONT until the parent says, through a
// pipe, that it is past its raise (a SIGCONT before the stop does nothing).
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t tstp;

static void on_tstp(int sig) { (void)sig; tstp++; }

// continuer is the child: for each round, it waits for the parent's word
// that it is about to stop, then sends SIGCONT until it hears back.
static void continuer(int go, int back, int rounds) {
	pid_t parent = getppid();
	char c;
	for (int i = 0; i < rounds; i++) {
		if (read(go, &c, 1) != 1)
			_exit(1);
		struct pollfd p = {.fd = back, .events = POLLIN};
		do
			kill(parent, SIGCONT);
		while (poll(&p, 1, 1) == 0);
		if (read(back, &c, 1) != 1)
			_exit(1);
	}
	_exit(0);
}

int main(void) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	setpgid(0, 0);
	int go[2], back[2];
	if (pipe(go) || pipe(back))
		return 1;
	pid_t c = fork();
	if (c == 0)
		continuer(go[0], back[0], 3);

	int sigs[] = {SIGSTOP, SIGTSTP, SIGTSTP};
	for (int i = 0; i < 3; i++) {
		if (i == 2) {
			struct sigaction sa;
			memset(&sa, 0, sizeof sa);
			sa.sa_handler = on_tstp;
			sigaction(SIGTSTP, &sa, NULL);
		}
		if (write(go[1], "x", 1) != 1)
			return 1;
		raise(sigs[i]);
		printf("past raise(%s), handler ran %d times\n", strsignal(sigs[i]), (int)tstp);
		if (write(back[1], "x", 1) != 1)
			return 1;
	}
	int st;
	waitpid(c, &st, 0);
	printf("child exited %d\n", WEXITSTATUS(st));
	printf("OK\n");
	return 0;
}
