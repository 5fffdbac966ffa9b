// The program's own ptrace as a debugger steps: a forked child asks to be
// traced and stops; the parent single-steps it (PTRACE_SINGLESTEP) a fixed
// number of instructions through a loop that writes memory, then plants an
// int3 breakpoint at a function with PEEKDATA/POKEDATA and continues. At
// each hit it does what gdb does to step over a breakpoint: puts the
// original word back, moves rip back onto the instruction (SETREGS),
// single-steps it, and puts the int3 in again. Then it removes the
// breakpoint for good and lets the child exit. Under rewind the steps are
// done by the recorder and replayed as steps: the child's registers after
// each one and what the loop computed must be the native ones.
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

#include "ptrace_stopped.h"

#define STEPS 300
#define HITS 3

static volatile long acc;

// work runs long enough (no system call inside) for every step to be in it.
static __attribute__((noinline)) void work(void) {
	for (long i = 0; i < 100000; i++)
		acc += i ^ (acc >> 3);
}

static __attribute__((noinline)) long target(long v) { return v * 3 + acc % 7; }

static int child_main(void) {
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
		return 100 + errno;
	// kill, not raise: raise blocks and unblocks signals with system calls
	// right after, which the steps would reach.
	kill(getpid(), SIGSTOP);
	work();
	long sum = 0;
	for (int i = 0; i < HITS; i++)
		sum += target(i);
	return (int)(sum & 0x3f);
}

int main(void) {
	setvbuf(stdout, NULL, _IONBF, 0);
	pid_t child = fork();
	if (child == 0)
		_exit(child_main());
	if (!stopped(child, SIGSTOP, "first stop"))
		return 1;

	// Single steps: each ends in a SIGTRAP (TRAP_TRACE) one instruction on.
	struct user_regs_struct regs;
	int inwork = 0, traps = 0;
	for (int i = 0; i < STEPS; i++) {
		if (ptrace(PTRACE_SINGLESTEP, child, NULL, NULL) != 0) {
			printf("PTRACE_SINGLESTEP %d: %s\n", i, strerror(errno));
			return 1;
		}
		if (!stopped(child, SIGTRAP, "step"))
			return 1;
		siginfo_t si;
		ptrace(PTRACE_GETSIGINFO, child, NULL, &si);
		traps += si.si_code == TRAP_TRACE;
		ptrace(PTRACE_GETREGS, child, NULL, &regs);
		inwork += regs.rip >= (unsigned long)work && regs.rip < (unsigned long)target;
	}
	errno = 0;
	long seen = ptrace(PTRACE_PEEKDATA, child, (void *)&acc, NULL);
	printf("%d steps: %d TRAP_TRACE, %d in work, acc %s\n", STEPS, traps, inwork,
	       errno == 0 && seen != 0 ? "written" : "untouched");

	// An int3 at target, stepped over at each hit as gdb does.
	unsigned long at = (unsigned long)target;
	errno = 0;
	long orig = ptrace(PTRACE_PEEKDATA, child, (void *)at, NULL);
	if (errno != 0) {
		printf("PEEKDATA target: %s\n", strerror(errno));
		return 1;
	}
	long bp = (orig & ~0xffL) | 0xcc;
	ptrace(PTRACE_POKEDATA, child, (void *)at, (void *)bp);
	int hits = 0;
	for (;;) {
		ptrace(PTRACE_CONT, child, NULL, NULL);
		if (!stopped(child, SIGTRAP, "breakpoint"))
			return 1;
		ptrace(PTRACE_GETREGS, child, NULL, &regs);
		if (regs.rip != at + 1) {
			printf("SIGTRAP at target%+ld\n", (long)(regs.rip - at));
			return 1;
		}
		hits++;
		long x = regs.rdi;
		ptrace(PTRACE_POKEDATA, child, (void *)at, (void *)orig);
		regs.rip = at;
		ptrace(PTRACE_SETREGS, child, NULL, &regs);
		if (ptrace(PTRACE_SINGLESTEP, child, NULL, NULL) != 0) {
			printf("PTRACE_SINGLESTEP over the breakpoint: %s\n", strerror(errno));
			return 1;
		}
		if (!stopped(child, SIGTRAP, "step over the breakpoint"))
			return 1;
		ptrace(PTRACE_GETREGS, child, NULL, &regs);
		printf("hit %d: target(%ld), stepped over to target%+ld\n", hits, x, (long)(regs.rip - at));
		if (hits == HITS)
			break;
		ptrace(PTRACE_POKEDATA, child, (void *)at, (void *)bp);
	}
	errno = 0;
	long now = ptrace(PTRACE_PEEKDATA, child, (void *)at, NULL);
	printf("breakpoint removed: %s\n", errno == 0 && now == orig ? "yes" : "no");

	ptrace(PTRACE_CONT, child, NULL, NULL);
	int st;
	waitpid(child, &st, 0);
	long want = 0;
	work(); // the same computation here gives the child's expected status
	for (int i = 0; i < HITS; i++)
		want += target(i);
	printf("child exited %d, want %ld\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1, want & 0x3f);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != (want & 0x3f) || traps != STEPS || hits != HITS || inwork == 0)
		return 1;
	printf("OK\n");
	return 0;
}
