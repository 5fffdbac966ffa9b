// counter.c: a global written a known number of times with known values,
// for watchpoints and watch history. A function called each time gives a
// breakpoint target.
#include <stdio.h>

int counter;

__attribute__((noinline)) void bump(int by) { counter += by; }

int main(void) {
	for (int i = 1; i <= 5; i++)
		bump(i);
	printf("counter %d\n", counter);
	return 0;
}
