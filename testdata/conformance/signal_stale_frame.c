// Signal frames left on the stack. A handled signal's frame holds what the
// kernel knows of the thread's last fault (trap number, error code, cr2)
// and its FPU state's header, which differ from one run to the next; once
// the handler returns, the frame is stale stack that a later function's
// uninitialized locals read. The program hashes that stack after an
// asynchronous signal (raise), a synchronous one (a fault its handler
// jumps out of) and one handled on an alternate stack, and prints the
// hashes: replay must print the recorded ones.
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sigcount.h"

static sigjmp_buf back;
static char altstack[1 << 16];

static void on_usr1(int sig) { (void)sig; }

static void on_segv(int sig) {
	(void)sig;
	siglongjmp(back, 1);
}

static unsigned long fnv(const volatile unsigned char *p, size_t n) {
	unsigned long h = 1469598103934665603UL;
	while (n--)
		h = (h ^ *p++) * 1099511628211UL;
	return h;
}

// stale hashes the stack below its caller, uninitialized here: on purpose.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
__attribute__((noinline)) static unsigned long stale(void) {
	volatile unsigned char buf[8192];
	return fnv(buf, sizeof buf);
}

int main(void) {
	install(SIGUSR1, on_usr1, 0);
	char *heap = malloc(1 << 20);
	heap[12345] = 1; // a page fault: the frame's cr2, trapno and error code
	raise(SIGUSR1);
	printf("after an asynchronous signal: %lx\n", stale());

	install(SIGSEGV, on_segv, 0);
	if (sigsetjmp(back, 1) == 0)
		*(volatile int *)16 = 1;
	printf("after a fault: %lx\n", stale());

	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
	sigaltstack(&ss, NULL);
	install(SIGUSR1, on_usr1, SA_ONSTACK);
	heap[512345] = 1;
	raise(SIGUSR1);
	printf("the alternate stack: %lx\n", fnv((unsigned char *)altstack, sizeof altstack));
	printf("OK\n");
	return 0;
}
