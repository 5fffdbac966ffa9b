// pause() and sigsuspend() wait for signals: a timer (setitimer) wakes
// pause in the main thread; a second thread sends SIGUSR1 to the process
// while the main thread waits in sigsuspend with SIGUSR1 unblocked only
// there. Each wait must return with EINTR after the handler ran.
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static volatile sig_atomic_t alarms, usr1;

static void on_alarm(int sig) { (void)sig; alarms++; }
static void on_usr1(int sig) { (void)sig; usr1++; }

static void *sender(void *arg) {
	(void)arg;
	usleep(20000);
	kill(getpid(), SIGUSR1);
	return NULL;
}

int main(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);

	struct itimerval it = {{0, 0}, {0, 10000}};
	setitimer(ITIMER_REAL, &it, NULL);
	int r = pause();
	printf("pause: %d %s alarms=%d\n", r, strerror(errno), (int)alarms);

	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	pthread_t th;
	pthread_create(&th, NULL, sender, NULL);
	sigset_t wait = old;
	sigdelset(&wait, SIGUSR1);
	while (!usr1) {
		r = sigsuspend(&wait);
		printf("sigsuspend: %d %s usr1=%d\n", r, strerror(errno), (int)usr1);
	}
	pthread_join(th, NULL);
	printf("OK\n");
	return 0;
}
