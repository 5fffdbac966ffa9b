// timerloop: a fixed amount of compute (argv[1] iterations, default about
// 2 s natively) with a 1 ms interval timer whose SIGALRM handler counts
// ticks: every signal arrives in a loop without system calls, the case where
// the recorder must stop the thread in user code at a point replay finds
// again. Prints the ticks and the result.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static volatile sig_atomic_t ticks;

static void on_alarm(int sig) {
	(void)sig;
	ticks++;
}

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 1500000000L;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 1000}, {0, 1000}};
	setitimer(ITIMER_REAL, &it, NULL);
	unsigned long x = 1;
	for (long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	printf("%d ticks, x %lx\n", (int)ticks, x);
	return 0;
}
