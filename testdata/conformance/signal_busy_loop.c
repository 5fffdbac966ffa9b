// A 1 ms interval timer sends SIGALRM to a thread in a compute loop that
// makes no system call: the handler counts ticks, the loop polls the count.
// Each signal must be delivered in the loop (within a bounded time, not at
// a system call that never comes) at a point replay finds again: the loop's
// registers change at every iteration.
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

static volatile sig_atomic_t ticks;

static void on_alarm(int sig) {
	(void)sig;
	ticks++;
}

int main(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 1000}, {0, 1000}};
	setitimer(ITIMER_REAL, &it, NULL);
	unsigned long x = 1, n = 0;
	while (ticks < 30) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		n++;
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	printf("ticks %d iterations %lu x %016lx\n", (int)ticks, n, x);
	printf("OK\n");
	return 0;
}
