// The program's own PTRACE_SINGLESTEP where a debugger's stepi meets the
// kernel: a step over a system call instruction (the call runs, the step
// stops right after it with its result in rax) and a step that delivers a
// signal (it stops at the first instruction of the handler). A forked
// child asks to be traced and stops; the parent steps it to a syscall
// instruction, over it, then steps with SIGUSR1 and lets it run to its
// end, the handler's work and the call's result checked by its status.
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrace_stopped.h"

extern char syscall_site[];
static volatile int handled;

static void handler(int sig) { handled += sig; }

static int child_main(void) {
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
		return 100 + errno;
	signal(SIGUSR1, handler);
	// kill, not raise: raise makes system calls of its own after the stop.
	kill(getpid(), SIGSTOP);
	long pid;
	__asm__ volatile(".globl syscall_site\nsyscall_site: syscall"
			 : "=a"(pid)
			 : "0"((long)SYS_getpid)
			 : "rcx", "r11", "memory");
	// The parent steps here with SIGUSR1: the handler runs first.
	__asm__ volatile("nop");
	return pid == getpid() && handled == SIGUSR1 ? 0 : 3;
}

// start forks the child and waits for its first stop; -1 if it did not
// stop.
static pid_t start(void) {
	pid_t child = fork();
	if (child == 0)
		_exit(child_main());
	return stopped(child, SIGSTOP, "first stop") ? child : -1;
}

int main(void) {
	setvbuf(stdout, NULL, _IONBF, 0);
	pid_t child = start();
	if (child < 0)
		return 1;
	struct user_regs_struct regs;
	int n = 0;
	do {
		if (!step(child, 0, &regs))
			return 1;
	} while (regs.rip != (unsigned long)syscall_site && ++n < 10000);
	printf("stepped to the syscall instruction: %s\n", n < 10000 ? "yes" : "no");

	if (!step(child, 0, &regs))
		return 1;
	printf("stepped over getpid: rip %+ld, rax the child's pid: %s\n",
	       (long)(regs.rip - (unsigned long)syscall_site), regs.rax == (unsigned long)child ? "yes" : "no");
	int over = regs.rip == (unsigned long)syscall_site + 2 && regs.rax == (unsigned long)child;

	if (!step(child, SIGUSR1, &regs))
		return 1;
	int inhandler = regs.rip == (unsigned long)handler;
	printf("stepped with SIGUSR1 into the handler: %s\n", inhandler ? "yes" : "no");

	ptrace(PTRACE_CONT, child, NULL, NULL);
	int st;
	waitpid(child, &st, 0);
	printf("child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	if (!over || !inhandler || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 1;
	printf("OK\n");
	return 0;
}
