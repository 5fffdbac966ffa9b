// The program's own ptrace as strace or gdb's `catch syscall` use it: the
// tracer resumes its child with PTRACE_SYSCALL, stop after stop, and a
// signal the child sends itself in a system call must stop it (a
// signal-delivery stop right after the call's exit stop) and, passed on by
// the tracer, reach the child's handler. Under rewind a signal that came
// while the tracee was stopped was held to its next system call, and lost
// at its exit_group.
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int got;

static void handler(int sig) { got += sig; }

int main(void) {
	setvbuf(stdout, NULL, _IONBF, 0);
	pid_t child = fork();
	if (child == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
			_exit(100);
		signal(SIGUSR1, handler);
		kill(getpid(), SIGSTOP);
		kill(getpid(), SIGUSR1);
		_exit(got == SIGUSR1 ? 0 : 5);
	}
	int st, sig = 0, sigstops = 0, calls = 0;
	waitpid(child, &st, 0);
	ptrace(PTRACE_SETOPTIONS, child, NULL, (void *)PTRACE_O_TRACESYSGOOD);
	for (int i = 0; i < 100; i++) {
		ptrace(PTRACE_SYSCALL, child, NULL, (void *)(long)sig);
		sig = 0;
		if (waitpid(child, &st, 0) != child || !WIFSTOPPED(st))
			break;
		if (WSTOPSIG(st) == (SIGTRAP | 0x80)) {
			calls++;
			continue;
		}
		printf("signal stop: %s\n", strsignal(WSTOPSIG(st)));
		sigstops++;
		sig = WSTOPSIG(st);
	}
	printf("syscall stops: %s; child exited %d\n", calls > 0 ? "some" : "none", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	if (sigstops != 1 || calls == 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 1;
	printf("OK\n");
	return 0;
}
