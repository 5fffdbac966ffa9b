// alarm.c: asynchronous signals. setitimer(ITIMER_REAL, 10 ms) delivers
// SIGALRM to a handler that counts ticks; the main loop makes system calls
// (getppid, a short nanosleep) until 20 ticks were counted, then prints the
// tick count and the number of loop iterations (which varies natively). Replay
// must inject each signal at the recorded point; an interrupted nanosleep
// returns EINTR.
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "sigcount.h"

int main(void) {
	count_alarms();
	start_timer(10000);

	long iterations = 0;
	struct timespec ts = {0, 200000}; /* 0.2 ms */
	while (alarms < 20) {
		getppid();
		nanosleep(&ts, NULL);
		iterations++;
	}
	stop_timer();
	printf("ticks: %d\n", (int)alarms);
	printf("iterations: %ld\n", iterations);
	return 0;
}
