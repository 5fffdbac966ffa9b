// Signal delivery in its forms: a SIGSEGV handler on an alternate stack
// (sigaltstack) that checks where it runs and jumps out with siglongjmp,
// sigqueue with a value read from siginfo, a signal left pending under
// sigprocmask and taken at unblock, a nested signal raised inside a handler,
// a POSIX timer (timer_create) firing into a handler, a read on a pipe
// interrupted by setitimer's SIGALRM (EINTR without SA_RESTART, resumed
// with it), and a robust mutex whose owner thread dies (EOWNERDEAD).
// flags: -pthread -lrt
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char altstack[64 * 1024];
static sigjmp_buf jump;
static volatile int on_alt, queued_value, usr2_seen, nested, timer_hits, alarms;

static void on_segv(int sig, siginfo_t *si, void *uc) {
	(void)uc;
	char here;
	on_alt = &here >= altstack && &here < altstack + sizeof altstack;
	assert(sig == SIGSEGV && si->si_addr == (void *)16);
	siglongjmp(jump, 1);
}

static void on_usr1(int sig, siginfo_t *si, void *uc) {
	(void)sig, (void)uc;
	queued_value = si->si_value.sival_int;
	if (si->si_code == SI_QUEUE && queued_value == 42) {
		raise(SIGUSR2); // blocked by sa_mask: runs after this handler
		nested = usr2_seen == 0;
	}
}

static void on_usr2(int sig) { (void)sig, usr2_seen++; }
static void on_timer(int sig) { (void)sig, timer_hits++; }
static void on_alarm(int sig) { (void)sig, alarms++; }

static void handle(int sig, void (*h)(int), int flags) {
	struct sigaction sa = {.sa_handler = h, .sa_flags = flags};
	sigemptyset(&sa.sa_mask);
	assert(sigaction(sig, &sa, NULL) == 0);
}

static pthread_mutex_t robust;
static void *die_holding(void *arg) {
	(void)arg;
	pthread_mutex_lock(&robust);
	return NULL; // dies with the lock held
}

int main(void) {
	setvbuf(stdout, NULL, _IONBF, 0);

	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
	assert(sigaltstack(&ss, NULL) == 0);
	struct sigaction sa = {.sa_sigaction = on_segv, .sa_flags = SA_SIGINFO | SA_ONSTACK};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	if (sigsetjmp(jump, 1) == 0)
		*(volatile int *)16 = 1;
	printf("SIGSEGV handled on the alternate stack: %s\n", on_alt ? "yes" : "no");

	struct sigaction su = {.sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO};
	sigemptyset(&su.sa_mask);
	sigaddset(&su.sa_mask, SIGUSR2);
	sigaction(SIGUSR1, &su, NULL);
	handle(SIGUSR2, on_usr2, 0);
	assert(sigqueue(getpid(), SIGUSR1, (union sigval){.sival_int = 42}) == 0);
	printf("sigqueue value %d, SIGUSR2 after the handler: %s\n", queued_value, nested && usr2_seen == 1 ? "yes" : "no");

	sigset_t block, pending;
	sigemptyset(&block);
	sigaddset(&block, SIGUSR2);
	sigprocmask(SIG_BLOCK, &block, NULL);
	kill(getpid(), SIGUSR2);
	sigpending(&pending);
	printf("pending while blocked: %d, handled before unblock: %d\n", sigismember(&pending, SIGUSR2), usr2_seen - 1);
	sigprocmask(SIG_UNBLOCK, &block, NULL);
	printf("handled after unblock: %d\n", usr2_seen - 1);

	handle(SIGRTMIN, on_timer, 0);
	timer_t tm;
	struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN};
	assert(timer_create(CLOCK_MONOTONIC, &sev, &tm) == 0);
	struct itimerspec its = {.it_value = {0, 1000000}, .it_interval = {0, 1000000}};
	timer_settime(tm, 0, &its, NULL);
	while (timer_hits < 3)
		pause();
	timer_delete(tm);
	printf("POSIX timer: at least 3 expirations\n");

	int fd[2];
	assert(pipe(fd) == 0);
	char c;
	struct itimerval it = {.it_value = {0, 20000}};
	handle(SIGALRM, on_alarm, 0);
	setitimer(ITIMER_REAL, &it, NULL);
	ssize_t r = read(fd[0], &c, 1);
	printf("read interrupted without SA_RESTART: %s\n", r == -1 && errno == EINTR ? "EINTR" : "no");
	handle(SIGALRM, on_alarm, SA_RESTART);
	setitimer(ITIMER_REAL, &it, NULL);
	if (fork() == 0) {
		usleep(60000);
		write(fd[1], "x", 1);
		_exit(0);
	}
	r = read(fd[0], &c, 1);
	printf("read restarted with SA_RESTART: %s, alarms %d\n", r == 1 && c == 'x' ? "yes" : "no", alarms);
	wait(NULL); // else, under load, the child outlives the program (a daemon to the recorder)

	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&robust, &ma);
	pthread_t th;
	pthread_create(&th, NULL, die_holding, NULL);
	pthread_join(th, NULL);
	int e = pthread_mutex_lock(&robust);
	printf("robust mutex after its owner died: %s\n", e == EOWNERDEAD ? "EOWNERDEAD" : strerror(e));
	pthread_mutex_consistent(&robust);
	pthread_mutex_unlock(&robust);

	printf("OK\n");
	return 0;
}
