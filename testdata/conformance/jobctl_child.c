// Job control of a child: it stops itself with SIGSTOP, then is stopped by
// its parent's SIGTSTP (in a process group of its own, so that the group
// is not orphaned and the signal stops it), and continued each time with
// SIGCONT. The parent sees each stop and continue with waitpid (WUNTRACED,
// WCONTINUED) and with the SIGCHLD it takes with sigwaitinfo (CLD_STOPPED,
// CLD_CONTINUED, CLD_EXITED and their si_status). Last, a SIGTSTP the child
// blocks is discarded by a SIGCONT before the child unblocks it: it must
// not stop then; and a SIGCONT it blocks (with a handler) is discarded by a
// SIGSTOP, so that the handler runs once, for the SIGCONT that continues
// the child.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jobgroup.h"

static int toparent[2], tochild[2];
static volatile sig_atomic_t conts;

static void on_cont(int sig) { (void)sig; conts++; }

static void say(const char *s) {
	if (write(toparent[1], s, strlen(s)) < 0)
		_exit(10);
}

static void await(void) {
	char c;
	if (read(tochild[0], &c, 1) != 1)
		_exit(11);
}

static void child(void) {
	sigset_t tstp;
	sigemptyset(&tstp);
	sigaddset(&tstp, SIGTSTP);
	raise(SIGSTOP);
	say("resumed after SIGSTOP\n");
	await(); // the parent stops us with SIGTSTP meanwhile
	say("resumed after SIGTSTP\n");
	sigprocmask(SIG_BLOCK, &tstp, NULL);
	say("blocked SIGTSTP\n");
	await(); // SIGTSTP then SIGCONT were sent: the SIGCONT discarded it
	sigprocmask(SIG_UNBLOCK, &tstp, NULL);
	say("unblocked SIGTSTP, still running\n");

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_cont;
	sigaction(SIGCONT, &sa, NULL);
	sigset_t cont;
	sigemptyset(&cont);
	sigaddset(&cont, SIGCONT);
	sigprocmask(SIG_BLOCK, &cont, NULL);
	say("blocked SIGCONT\n");
	await(); // SIGCONT, SIGSTOP (which discarded it), SIGCONT
	sigprocmask(SIG_UNBLOCK, &cont, NULL);
	char msg[64];
	snprintf(msg, sizeof msg, "SIGCONT handled %d times\n", (int)conts);
	say(msg);
	_exit(3);
}

// line reads one line the child wrote and prints it.
static void line(void) {
	char buf[128];
	size_t n = 0;
	while (n < sizeof buf - 1 && read(toparent[0], buf + n, 1) == 1 && buf[n] != '\n')
		n++;
	buf[n] = 0;
	printf("child: %s\n", buf);
}

// chld takes the next SIGCHLD and prints what it says.
static void chld(const sigset_t *set) {
	siginfo_t si;
	if (sigwaitinfo(set, &si) != SIGCHLD) {
		printf("sigwaitinfo: %s\n", strerror(errno));
		exit(1);
	}
	const char *code = "other";
	switch (si.si_code) {
	case CLD_STOPPED: code = "CLD_STOPPED"; break;
	case CLD_CONTINUED: code = "CLD_CONTINUED"; break;
	case CLD_EXITED: code = "CLD_EXITED"; break;
	case CLD_KILLED: code = "CLD_KILLED"; break;
	}
	printf("SIGCHLD %s status %d\n", code, si.si_status);
}

static void waitfor(pid_t c, int opts) {
	int st;
	if (waitpid(c, &st, opts) != c) {
		printf("waitpid: %s\n", strerror(errno));
		exit(1);
	}
	if (WIFSTOPPED(st))
		printf("wait: stopped by %s\n", strsignal(WSTOPSIG(st)));
	else if (WIFCONTINUED(st))
		printf("wait: continued\n");
	else if (WIFEXITED(st))
		printf("wait: exited %d\n", WEXITSTATUS(st));
	else
		printf("wait: status %#x\n", st);
}

// cont checks that the child stopped (its wait status and SIGCHLD),
// continues it and checks that it continued.
static void cont(pid_t c, const sigset_t *set) {
	waitfor(c, WUNTRACED);
	chld(set);
	kill(c, SIGCONT);
	waitfor(c, WCONTINUED);
	chld(set);
}

// release lets the child past its next await.
static void release(void) {
	if (write(tochild[1], "x", 1) != 1)
		exit(1);
}

int main(void) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (pipe(toparent) || pipe(tochild))
		return 1;
	pid_t c = fork_job(child);

	cont(c, &set);
	line();

	kill(c, SIGTSTP);
	cont(c, &set);
	release();
	line();

	line(); // blocked SIGTSTP
	kill(c, SIGTSTP);
	kill(c, SIGCONT);
	release();
	line();

	line(); // blocked SIGCONT
	kill(c, SIGCONT);
	kill(c, SIGSTOP);
	cont(c, &set);
	release();
	line();
	waitfor(c, 0);
	chld(&set);
	printf("OK\n");
	return 0;
}
