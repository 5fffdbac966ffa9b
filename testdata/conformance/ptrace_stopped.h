// What the ptrace_*.c conformance programs share: the tracer waits for
// its tracee's next stop, or single-steps it.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>

// stopped waits for the child's next stop and says whether it is a stop
// by sig, printing what came instead.
static __attribute__((unused)) int stopped(pid_t child, int sig, const char *what) {
	int st;
	if (waitpid(child, &st, 0) != child) {
		printf("%s: waitpid: %s\n", what, strerror(errno));
		return 0;
	}
	if (!WIFSTOPPED(st) || WSTOPSIG(st) != sig) {
		printf("%s: status %#x, want a %s stop\n", what, st, strsignal(sig));
		return 0;
	}
	return 1;
}

// step single-steps the child, delivering sig, and reads its registers at
// the SIGTRAP that ends the step; it says whether all went so.
static __attribute__((unused)) int step(pid_t child, int sig, struct user_regs_struct *regs) {
	if (ptrace(PTRACE_SINGLESTEP, child, NULL, (void *)(long)sig) != 0) {
		printf("PTRACE_SINGLESTEP: %s\n", strerror(errno));
		return 0;
	}
	if (!stopped(child, SIGTRAP, "step"))
		return 0;
	return ptrace(PTRACE_GETREGS, child, NULL, regs) == 0;
}
