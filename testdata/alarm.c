// alarm.c: asynchronous signals. setitimer(ITIMER_REAL, 10 ms) delivers
// SIGALRM to a handler that counts ticks; the main loop makes system calls
// (getppid, a short nanosleep) until 20 ticks were counted, then prints the
// tick count and the number of loop iterations (which varies natively). Replay
// must inject each signal at the recorded point; an interrupted nanosleep
// returns EINTR.
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t ticks;

static void on_alarm(int sig) {
	(void)sig;
	ticks++;
}

int main(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);

	struct itimerval it = {{0, 10000}, {0, 10000}};
	setitimer(ITIMER_REAL, &it, NULL);

	long iterations = 0;
	struct timespec ts = {0, 200000}; /* 0.2 ms */
	while (ticks < 20) {
		getppid();
		nanosleep(&ts, NULL);
		iterations++;
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	printf("ticks: %d\n", (int)ticks);
	printf("iterations: %ld\n", iterations);
	return 0;
}
