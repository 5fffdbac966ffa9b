/* buffered_flushes ROUNDS N: ROUNDS times, N getppid calls (which the hook
   records) and a sched_yield (which it does not: a stop, where the
   recorder takes the N records). A test checks that each yield's event
   comes after exactly the N calls before it, however the recorder logged
   them (at once, or beside the program). */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
	int rounds = argc > 1 ? atoi(argv[1]) : 5, n = argc > 2 ? atoi(argv[2]) : 5000;
	long sum = 0;
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < n; i++)
			sum += getppid();
		sched_yield();
	}
	printf("calls %d\n", rounds * n + (sum == 0));
	return 0;
}
