// A storm of stops and continues to a process of three threads (two that
// sleep in a loop, the main one in pause): SIGSTOP or SIGTSTP followed at
// once by SIGCONT, many times; the SIGCONT discards a stop signal still
// pending, so the child must end up running. Then one last stop that the
// parent waits for, a continue, and SIGKILL.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void *nap(void *arg) {
	(void)arg;
	for (;;)
		usleep(100);
	return NULL;
}

static void expect(pid_t c, int opts, int (*what)(int), const char *name) {
	int st;
	if (waitpid(c, &st, opts) != c || !what(st)) {
		printf("FAIL: waitpid status %#x, want %s\n", st, name);
		exit(1);
	}
	printf("%s\n", name);
}

static int stopped(int st) { return WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP; }
static int continued(int st) { return WIFCONTINUED(st); }
static int killed(int st) { return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL; }

int main(void) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	int ready[2];
	if (pipe(ready))
		return 1;
	pid_t c = fork();
	if (c == 0) {
		setpgid(0, 0); // not orphaned: SIGTSTP stops it
		pthread_t t;
		pthread_create(&t, NULL, nap, NULL);
		pthread_create(&t, NULL, nap, NULL);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	setpgid(c, c);
	char x;
	if (read(ready[0], &x, 1) != 1)
		return 1;
	for (int i = 0; i < 200; i++) {
		kill(c, i % 2 ? SIGTSTP : SIGSTOP);
		kill(c, SIGCONT);
	}
	kill(c, SIGSTOP);
	expect(c, WUNTRACED, stopped, "stopped");
	kill(c, SIGCONT);
	expect(c, WCONTINUED, continued, "continued");
	kill(c, SIGKILL);
	expect(c, 0, killed, "killed");
	printf("OK\n");
	return 0;
}
