// The program's own PTRACE_SINGLESTEP from the stop of an exec: a forked
// child asks to be traced and execs /bin/true, whose exec stops it (the
// SIGTRAP the kernel sends a traced process at its exec); the parent
// single-steps the dynamic loader's first instructions from there, each
// step a SIGTRAP, rip moving on, then lets the child run to its end.
// Replay's child stands at its exec when the steps are redone.
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrace_stopped.h"

#define STEPS 5

// traced_true is the child: traced, it execs /bin/true.
static void traced_true(void) {
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
		_exit(100);
	execl("/bin/true", "true", (char *)NULL);
	_exit(101);
}

int main(void) {
	setvbuf(stdout, NULL, _IONBF, 0);
	pid_t child = fork();
	if (child == 0)
		traced_true();
	if (!stopped(child, SIGTRAP, "exec"))
		return 1;
	struct user_regs_struct regs;
	ptrace(PTRACE_GETREGS, child, NULL, &regs);
	unsigned long entry = regs.rip, last = regs.rip;
	int moved = 0;
	for (int i = 0; i < STEPS; i++) {
		if (!step(child, 0, &regs))
			return 1;
		moved += regs.rip != last;
		last = regs.rip;
	}
	printf("%d steps from the exec stop, %d moved rip, %s the entry\n", STEPS, moved,
	       last != entry ? "away from" : "still at");
	ptrace(PTRACE_CONT, child, NULL, NULL);
	int st;
	waitpid(child, &st, 0);
	printf("child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	if (moved == 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 1;
	printf("OK\n");
	return 0;
}
