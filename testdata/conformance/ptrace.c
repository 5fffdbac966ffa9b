// The program's own ptrace, as a debugger uses it: a forked child asks to
// be traced (PTRACE_TRACEME) and stops; the parent reads its registers
// (GETREGS), a word of its memory (PEEKDATA), its stop's siginfo
// (GETSIGINFO), sets options, continues it and collects its exit. Under
// rewind the program's own tracing of its child is emulated by the
// recorder; the first process's PTRACE_TRACEME, whose parent is rewind
// itself, fails with EPERM as under any debugger; a request on a process it
// does not trace fails with ESRCH.
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long marker = 0x5245574e44; // "REWND"

static int traced(void) {
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	int pid = 0;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "TracerPid: %d", &pid) == 1)
			break;
	if (f)
		fclose(f);
	return pid != 0;
}

int main(void) {
	int bad = 0;
	if (traced()) {
		errno = 0;
		long r = ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		printf("own TRACEME under a tracer: %ld %s\n", r, strerror(errno));
		bad |= r != -1 || errno != EPERM;
	}
	errno = 0;
	long r = ptrace(PTRACE_PEEKDATA, getppid(), &marker, NULL);
	printf("PEEKDATA of an untraced process: %ld %s\n", r, strerror(errno));
	bad |= r != -1 || errno != ESRCH;

	pid_t child = fork();
	if (child == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
			_exit(100 + errno);
		marker = 42;
		raise(SIGSTOP);
		_exit(7);
	}
	int st;
	waitpid(child, &st, 0);
	if (WIFEXITED(st)) {
		printf("the child could not be traced: %s\n", strerror(WEXITSTATUS(st) - 100));
		bad = 1;
	} else {
		printf("child stopped by %s\n", WIFSTOPPED(st) ? strsignal(WSTOPSIG(st)) : "?");
		struct user_regs_struct regs;
		memset(&regs, 0, sizeof regs);
		long g = ptrace(PTRACE_GETREGS, child, NULL, &regs);
		printf("GETREGS %ld, rip set %d\n", g, regs.rip != 0);
		errno = 0;
		long word = ptrace(PTRACE_PEEKDATA, child, &marker, NULL);
		printf("PEEKDATA marker: %ld\n", word);
		bad |= word != 42;
		siginfo_t si;
		memset(&si, 0, sizeof si);
		ptrace(PTRACE_GETSIGINFO, child, NULL, &si);
		printf("GETSIGINFO signo %d\n", si.si_signo);
		bad |= si.si_signo != SIGSTOP;
		ptrace(PTRACE_SETOPTIONS, child, NULL, (void *)PTRACE_O_TRACEEXIT);
		ptrace(PTRACE_CONT, child, NULL, NULL);
		waitpid(child, &st, 0);
		unsigned long msg = 0;
		if (WIFSTOPPED(st) && st >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) {
			ptrace(PTRACE_GETEVENTMSG, child, NULL, &msg);
			printf("exit event, status %lu\n", msg >> 8);
			bad |= msg >> 8 != 7;
			ptrace(PTRACE_CONT, child, NULL, NULL);
			waitpid(child, &st, 0);
		}
		printf("child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
	if (bad)
		return 1;
	printf("OK\n");
	return 0;
}
