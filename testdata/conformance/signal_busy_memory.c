// Signals into a loop whose registers are the same at every iteration:
// built without optimisation, it keeps its floating-point value and its
// counter on the stack and in a global, and reloads the same tick count
// each time. The point where a signal is delivered is told apart from the
// other iterations by memory (the recorder logs a word that changes), not by
// registers.
#include <stdio.h>

#include "../sigcount.h"

static long rounds;

int main(void) {
	count_alarms();
	start_timer(2000);
	double x = 1.0;
	while (alarms < 10) {
		x = x * 1.0000001 + 1e-9;
		rounds++;
	}
	stop_timer();
	printf("ticks %d rounds %ld x %.17g\n", (int)alarms, rounds, x);
	printf("OK\n");
	return 0;
}
