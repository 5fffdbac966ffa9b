// Signals between the processes of a tree: a child stopped by SIGTERM
// (handled), one killed by SIGTERM (default action), one by SIGKILL, and a
// child that signals its parent with SIGUSR1.
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t got;

static void on_sig(int sig) { got = sig; }

static void report(pid_t pid, const char *what) {
	int st;
	waitpid(pid, &st, 0);
	if (WIFEXITED(st))
		printf("%s: exit %d\n", what, WEXITSTATUS(st));
	else
		printf("%s: killed by %s\n", what, strsignal(WTERMSIG(st)));
	fflush(stdout);
}

int main(void) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	int ready[2];
	pipe(ready);
	char c;

	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGTERM, on_sig);
		write(ready[1], "r", 1);
		while (!got)
			pause();
		_exit(10 + got);
	}
	read(ready[0], &c, 1);
	kill(pid, SIGTERM);
	report(pid, "handled SIGTERM");

	for (int sig = SIGTERM; sig; sig = sig == SIGTERM ? SIGKILL : 0) {
		pid = fork();
		if (pid == 0) {
			write(ready[1], "r", 1);
			for (;;)
				pause();
		}
		read(ready[0], &c, 1);
		kill(pid, sig);
		report(pid, sig == SIGTERM ? "default SIGTERM" : "SIGKILL");
	}

	signal(SIGUSR1, on_sig);
	got = 0;
	pid = fork();
	if (pid == 0) {
		kill(getppid(), SIGUSR1);
		_exit(0);
	}
	report(pid, "signalling child");
	while (!got)
		pause();
	printf("parent got SIGUSR1: %d\n", got == SIGUSR1);
	printf("OK\n");
	return 0;
}
