// watchbp.c: a global counter written N times (argv[1]) in one loop without
// a system call, in main or (argv[2] = "thread") in a second thread, then calls to
// done() and after(), where a user stops to go back through the writes with a
// watchpoint on counter: a breakpoint stop after the busy loop, in its
// segment, with breakpoints armed.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile long counter;
static long n = 5000;

__attribute__((noinline)) void done(void) { __asm__ volatile("" ::: "memory"); }

// after is where a step's temporary breakpoint goes after done.
__attribute__((noinline)) void after(void) { __asm__ volatile("" ::: "memory"); }

// never is not called: a breakpoint armed that no search meets.
__attribute__((noinline, used)) void never(void) { counter = -1; }

static void *loop(void *arg) {
	for (long i = 0; i < n; i++)
		counter++;
	done();
	after();
	return arg;
}

int main(int argc, char **argv) {
	if (argc > 1)
		n = atol(argv[1]);
	if (argc > 2 && strcmp(argv[2], "thread") == 0) {
		pthread_t t;
		pthread_create(&t, NULL, loop, NULL);
		pthread_join(t, NULL);
	} else {
		loop(NULL);
	}
	printf("counter %ld\n", counter);
	return 0;
}
