// A tracer in the way strace is one, between processes of the program: a
// forked child stops itself (SIGSTOP); the parent sees the job-control stop
// with waitpid(WSTOPPED), seizes the child (PTRACE_SEIZE with options that
// follow its forks, PTRACE_O_TRACESYSGOOD and PTRACE_O_TRACEEXIT),
// interrupts it (PTRACE_INTERRUPT: the group-stop is reported as a
// PTRACE_EVENT_STOP), lets it listen (PTRACE_LISTEN) and continues it with
// kill(SIGCONT). Then it follows every system call of the child and of the
// grandchild the child forks (PTRACE_EVENT_FORK, its GETEVENTMSG, the
// grandchild's first PTRACE_EVENT_STOP), reading each call with
// PTRACE_GET_SYSCALL_INFO (entry: number and arguments; exit: value), and
// counts what it saw. The counts it prints do not depend on timing.
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAGIC 0x5eed

static void fail(const char *what) {
	printf("FAIL %s: %s\n", what, strerror(errno));
	exit(1);
}

// child stops itself, then forks a grandchild; both make the marked call
// (getpgid(MAGIC), which fails with ESRCH) a known number of times.
static void child(void) {
	raise(SIGSTOP);
	pid_t g = fork();
	if (g < 0)
		_exit(10);
	int n = g == 0 ? 2 : 3;
	for (int i = 0; i < n; i++)
		syscall(SYS_getpgid, MAGIC);
	if (g == 0)
		_exit(7);
	int st;
	if (waitpid(g, &st, 0) != g || !WIFEXITED(st) || WEXITSTATUS(st) != 7)
		_exit(11);
	_exit(3);
}

int main(void) {
	setvbuf(stdout, NULL, _IONBF, 0);
	pid_t c = fork();
	if (c < 0)
		fail("fork");
	if (c == 0)
		child();
	int st;
	if (waitpid(c, &st, WSTOPPED) != c || !WIFSTOPPED(st) || WSTOPSIG(st) != SIGSTOP)
		fail("job-control stop");
	long opts = PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEFORK | PTRACE_O_TRACEEXIT;
	if (ptrace(PTRACE_SEIZE, c, 0, opts) != 0)
		fail("PTRACE_SEIZE");
	if (ptrace(PTRACE_INTERRUPT, c, 0, 0) != 0)
		fail("PTRACE_INTERRUPT");
	// The group-stop, reported to the new tracer.
	if (waitpid(c, &st, __WALL) != c || !WIFSTOPPED(st) || st >> 16 != PTRACE_EVENT_STOP)
		fail("group-stop report");
	siginfo_t si;
	int info = ptrace(PTRACE_GETSIGINFO, c, 0, &si) == 0 && si.si_signo == SIGSTOP &&
	           si.si_code == (SIGSTOP | PTRACE_EVENT_STOP << 8);
	printf("group-stop: sig %s, siginfo %d\n", strsignal(WSTOPSIG(st)), info);
	if (ptrace(PTRACE_LISTEN, c, 0, 0) != 0)
		fail("PTRACE_LISTEN");
	kill(c, SIGCONT);
	int traps = 0, conts = 0, forks = 0, births = 0, entries = 0, exits = 0, esrch = 0, exitev = 0, ends = 0;
	pid_t grandchild = 0;
	while (ends < 2) {
		pid_t p = waitpid(-1, &st, __WALL);
		if (p < 0)
			fail("waitpid");
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			ends++;
			printf("%s ended: status %d\n", p == c ? "child" : "grandchild", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
			continue;
		}
		int sig = WSTOPSIG(st), event = st >> 16, inject = 0;
		if (sig == (SIGTRAP | 0x80)) {
			struct __ptrace_syscall_info info;
			long n = ptrace(PTRACE_GET_SYSCALL_INFO, p, sizeof info, &info);
			if (n <= 0)
				fail("PTRACE_GET_SYSCALL_INFO");
			if (info.op == PTRACE_SYSCALL_INFO_ENTRY && info.entry.nr == SYS_getpgid && info.entry.args[0] == MAGIC)
				entries++;
			if (info.op == PTRACE_SYSCALL_INFO_EXIT && info.exit.is_error && info.exit.rval == -ESRCH)
				esrch++;
			if (info.op == PTRACE_SYSCALL_INFO_EXIT)
				exits++;
		} else if (event == PTRACE_EVENT_FORK) {
			unsigned long msg;
			ptrace(PTRACE_GETEVENTMSG, p, 0, &msg);
			grandchild = msg;
			forks++;
		} else if (event == PTRACE_EVENT_STOP) {
			if (p == grandchild || (grandchild == 0 && p != c))
				births++;
			else
				traps++;
		} else if (event == PTRACE_EVENT_EXIT) {
			exitev++;
		} else if (sig == SIGCONT) {
			conts++;
			inject = sig;
		} else if (event == 0) {
			inject = sig;
		}
		if (ptrace(PTRACE_SYSCALL, p, 0, inject) != 0 && errno != ESRCH)
			fail("PTRACE_SYSCALL");
	}
	printf("continued: %d trap(s), SIGCONT delivered %d\n", traps > 0, conts);
	printf("fork events %d, grandchild stopped at birth %d, exit events %d\n", forks, births, exitev);
	printf("marked calls: %d entries, %d ESRCH exits, exits seen %d\n", entries, esrch, exits > entries);
	printf("OK\n");
	return 0;
}
