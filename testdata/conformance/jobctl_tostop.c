// flags: -lutil
// SIGTTOU for a background write to a terminal with TOSTOP set. A child
// makes a pty its controlling terminal (setsid, TIOCSCTTY) and sets TOSTOP;
// its own child, in a process group of its own (in the background), writes
// to the terminal: the write is stopped by SIGTTOU. The session leader sees
// the stop, makes the writer's group the foreground one (tcsetpgrp) and
// continues it: the write, restarted, goes through, and the first process
// reads it from the pty's master side. The writer ends only when the leader
// has seen it continued: it could otherwise exit first, and the leader's
// wait for WCONTINUED would see the exit instead.
#define _GNU_SOURCE
#include <errno.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

static void check(int ok, const char *what) {
	if (!ok) {
		printf("%s: %s\n", what, strerror(errno));
		exit(1);
	}
}

// describe says what a wait status is.
static const char *describe(int st) {
	static char buf[64];
	if (WIFSTOPPED(st))
		snprintf(buf, sizeof buf, "stopped by %s", strsignal(WSTOPSIG(st)));
	else if (WIFCONTINUED(st))
		snprintf(buf, sizeof buf, "continued");
	else if (WIFEXITED(st))
		snprintf(buf, sizeof buf, "exited %d", WEXITSTATUS(st));
	else
		snprintf(buf, sizeof buf, "status %#x", st);
	return buf;
}

// writer writes to the terminal from the background, then waits for a
// byte on done before it ends.
static void writer(int tty, int done) {
	const char msg[] = "from the background\n";
	ssize_t n = write(tty, msg, sizeof msg - 1);
	char c;
	if (read(done, &c, 1) != 1)
		_exit(1);
	_exit(n == sizeof msg - 1 ? 0 : 1);
}

// leader runs the session of the terminal.
static void leader(int tty) {
	check(setsid() >= 0, "setsid");
	check(ioctl(tty, TIOCSCTTY, 0) == 0, "TIOCSCTTY");
	struct termios tio;
	check(tcgetattr(tty, &tio) == 0, "tcgetattr");
	tio.c_lflag |= TOSTOP;
	check(tcsetattr(tty, TCSANOW, &tio) == 0, "tcsetattr");
	int ready[2], done[2];
	check(pipe(ready) == 0, "pipe");
	check(pipe(done) == 0, "pipe");
	pid_t w = fork();
	if (w == 0) {
		char c;
		setpgid(0, 0);
		if (read(ready[0], &c, 1) != 1)
			_exit(1);
		writer(tty, done[0]);
	}
	setpgid(w, w);
	check(write(ready[1], "x", 1) == 1, "write");
	int st;
	check(waitpid(w, &st, WUNTRACED) == w, "waitpid");
	printf("leader: writer %s\n", describe(st));
	// The leader's group has the terminal: it may give it away. It then
	// is in the background, and SIGTTOU is not to stop it.
	signal(SIGTTOU, SIG_IGN);
	check(tcsetpgrp(tty, w) == 0, "tcsetpgrp");
	kill(w, SIGCONT);
	check(waitpid(w, &st, WCONTINUED) == w, "waitpid");
	printf("leader: writer %s\n", describe(st));
	check(write(done[1], "x", 1) == 1, "write");
	check(waitpid(w, &st, 0) == w, "waitpid");
	printf("leader: writer %s\n", describe(st));
	_exit(WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1);
}

int main(void) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	int master, tty;
	check(openpty(&master, &tty, NULL, NULL, NULL) == 0, "openpty");
	pid_t l = fork();
	if (l == 0) {
		close(master);
		leader(tty);
	}
	close(tty);
	int st;
	check(waitpid(l, &st, 0) == l, "waitpid");
	printf("leader %s\n", describe(st));
	char buf[128];
	ssize_t n = read(master, buf, sizeof buf - 1);
	check(n > 0, "read");
	buf[n] = 0;
	buf[strcspn(buf, "\r\n")] = 0;
	printf("terminal got: %s\n", buf);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 1;
	printf("OK\n");
	return 0;
}
