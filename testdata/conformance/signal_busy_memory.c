// Signals into a loop whose registers are the same at every iteration:
// built without optimisation, it keeps its floating-point value and its
// counter on the stack and in a global, and reloads the same tick count
// each time. The point where a signal is delivered is told apart from the
// other iterations by memory (the recorder logs a word that changes), not by
// registers.
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

static volatile sig_atomic_t ticks;
static long rounds;

static void on_alarm(int sig) {
	(void)sig;
	ticks++;
}

int main(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 2000}, {0, 2000}};
	setitimer(ITIMER_REAL, &it, NULL);
	double x = 1.0;
	while (ticks < 10) {
		x = x * 1.0000001 + 1e-9;
		rounds++;
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	printf("ticks %d rounds %ld x %.17g\n", (int)ticks, rounds, x);
	printf("OK\n");
	return 0;
}
