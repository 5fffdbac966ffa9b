// A 1 ms interval timer sends SIGALRM to a thread in a compute loop that
// makes no system call: the handler counts ticks, the loop polls the count.
// Each signal must be delivered in the loop (within a bounded time, not at
// a system call that never comes) at a point replay finds again: the loop's
// registers change at every iteration.
#include <stdio.h>

#include "../sigcount.h"

int main(void) {
	count_alarms();
	start_timer(1000);
	unsigned long x = 1, n = 0;
	while (alarms < 30) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		n++;
	}
	stop_timer();
	printf("ticks %d iterations %lu x %016lx\n", (int)alarms, n, x);
	printf("OK\n");
	return 0;
}
