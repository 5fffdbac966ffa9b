// The program's own ptrace setting what a debugger sets besides the
// general registers: a hardware watchpoint (POKEUSER into u_debugreg, as
// gdb's `watch`), and SSE registers through PTRACE_SETFPREGS and
// PTRACE_SETREGSET (NT_X86_XSTATE), as gdb restores them after calling a
// function of the program. A forked child asks to be traced and stops; the
// parent watches a variable the child then writes, and at two int3 of the
// child puts values in xmm1 and xmm2, which the child reads and checks.
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrace_stopped.h"

#define MAGIC1 0x1122334455667788UL
#define MAGIC2 0x0badc0ffee0ddf00UL

static volatile long watched;

static int child_main(void) {
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
		return 100 + errno;
	kill(getpid(), SIGSTOP);
	watched = 1; // the watchpoint fires after this write
	unsigned long x1, x2;
	__asm__ volatile("int3\n\tmovq %%xmm1, %0" : "=r"(x1));
	__asm__ volatile("int3\n\tmovq %%xmm2, %0" : "=r"(x2));
	return x1 == MAGIC1 && x2 == MAGIC2 ? 0 : 4;
}

// debugreg is the offset of debug register n in struct user.
static void *debugreg(int n) { return (void *)(offsetof(struct user, u_debugreg) + 8 * n); }

// xmm is where register n lies in an FXSAVE area (the XSAVE area's start).
static unsigned long *xmm(void *area, int n) { return (unsigned long *)((char *)area + 160 + 16 * n); }

int main(void) {
	setvbuf(stdout, NULL, _IONBF, 0);
	pid_t child = fork();
	if (child == 0)
		_exit(child_main());
	int ok = stopped(child, SIGSTOP, "first stop");

	// DR0 the address, DR7: enabled locally, on writes, 8 bytes.
	unsigned long dr7 = 1 | 1UL << 16 | 3UL << 18;
	ok = ok && ptrace(PTRACE_POKEUSER, child, debugreg(0), (void *)&watched) == 0;
	ok = ok && ptrace(PTRACE_POKEUSER, child, debugreg(7), (void *)dr7) == 0;
	if (!ok) {
		printf("setting the watchpoint: %s\n", strerror(errno));
		return 1;
	}
	ptrace(PTRACE_CONT, child, NULL, NULL);
	if (!stopped(child, SIGTRAP, "watchpoint"))
		return 1;
	siginfo_t si;
	ptrace(PTRACE_GETSIGINFO, child, NULL, &si);
	unsigned long dr6 = ptrace(PTRACE_PEEKUSER, child, debugreg(6), NULL);
	long seen = ptrace(PTRACE_PEEKDATA, child, (void *)&watched, NULL);
	int watch = si.si_code == TRAP_HWBKPT && (dr6 & 1) && seen == 1;
	printf("watchpoint fired on the write: %s\n", watch ? "yes" : "no");
	ptrace(PTRACE_POKEUSER, child, debugreg(7), NULL);
	int cleared = ptrace(PTRACE_PEEKUSER, child, debugreg(7), NULL) == 0;

	ptrace(PTRACE_CONT, child, NULL, NULL);
	if (!stopped(child, SIGTRAP, "first int3"))
		return 1;
	struct user_fpregs_struct fp;
	ptrace(PTRACE_GETFPREGS, child, NULL, &fp);
	*xmm(&fp, 1) = MAGIC1;
	int setfp = ptrace(PTRACE_SETFPREGS, child, NULL, &fp) == 0;

	ptrace(PTRACE_CONT, child, NULL, NULL);
	if (!stopped(child, SIGTRAP, "second int3"))
		return 1;
	static char xs[8192] __attribute__((aligned(64)));
	struct iovec iov = {xs, sizeof xs};
	int setxs = ptrace(PTRACE_GETREGSET, child, (void *)NT_X86_XSTATE, &iov) == 0;
	*xmm(xs, 2) = MAGIC2;
	setxs = setxs && ptrace(PTRACE_SETREGSET, child, (void *)NT_X86_XSTATE, &iov) == 0;
	printf("DR7 cleared %d, SETFPREGS %d, SETREGSET %d\n", cleared, setfp, setxs);

	ptrace(PTRACE_CONT, child, NULL, NULL);
	int st;
	waitpid(child, &st, 0);
	printf("child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	if (!watch || !cleared || !setfp || !setxs || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 1;
	printf("OK\n");
	return 0;
}
