// sigcount.h: what the test programs that take signals share: handlers
// installed with sigaction, the handlers that count SIGALRM and SIGCHLD,
// and the interval timer that sends SIGALRM.
#include <signal.h>
#include <string.h>
#include <sys/time.h>

// install makes handler take sig, with flags as sa_flags and no other
// signal blocked while it runs.
static __attribute__((unused)) void install(int sig, void (*handler)(int), int flags) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

// alarms and sigchld count the signals count_alarms and count_sigchld
// asked for: volatile, as the program polls them while handlers run.
static volatile sig_atomic_t alarms, sigchld;

static void on_alarm_count(int sig) {
	(void)sig;
	alarms++;
}

static void on_sigchld_count(int sig) {
	(void)sig;
	sigchld++;
}

// count_alarms counts each SIGALRM in alarms; a call it interrupts fails
// with EINTR.
static __attribute__((unused)) void count_alarms(void) {
	install(SIGALRM, on_alarm_count, 0);
}

// count_sigchld counts each SIGCHLD in sigchld; the calls it interrupts
// restart.
static __attribute__((unused)) void count_sigchld(void) {
	install(SIGCHLD, on_sigchld_count, SA_RESTART);
}

// start_timer sends SIGALRM every usec microseconds (under a second).
static __attribute__((unused)) void start_timer(long usec) {
	struct itimerval it = {{0, usec}, {0, usec}};
	setitimer(ITIMER_REAL, &it, NULL);
}

// stop_timer stops the timer start_timer started.
static __attribute__((unused)) void stop_timer(void) {
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
}
