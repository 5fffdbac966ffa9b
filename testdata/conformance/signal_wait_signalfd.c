// sigwaitinfo, sigtimedwait and signalfd take blocked signals without a
// handler: a second thread sends SIGUSR1 and SIGUSR2 (with sigqueue values)
// to the process while the main thread waits; a sigtimedwait with nothing
// pending times out with EAGAIN.
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

static void *sender(void *arg) {
	(void)arg;
	union sigval v;
	usleep(10000);
	v.sival_int = 42;
	sigqueue(getpid(), SIGUSR1, v);
	usleep(10000);
	v.sival_int = 43;
	sigqueue(getpid(), SIGUSR2, v);
	return NULL;
}

int main(void) {
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	struct timespec ts = {0, 5000000};
	siginfo_t si;
	int r = sigtimedwait(&set, &si, &ts);
	printf("sigtimedwait: %d %s\n", r, r < 0 ? strerror(errno) : "");

	pthread_t th;
	pthread_create(&th, NULL, sender, NULL);
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, SIGUSR1);
	r = sigwaitinfo(&one, &si);
	printf("sigwaitinfo: %d value %d\n", r, si.si_value.sival_int);

	sigset_t two;
	sigemptyset(&two);
	sigaddset(&two, SIGUSR2);
	int fd = signalfd(-1, &two, 0);
	struct signalfd_siginfo fi;
	ssize_t n = read(fd, &fi, sizeof fi);
	printf("signalfd: %zd signo %u value %d\n", n, fi.ssi_signo, fi.ssi_int);
	pthread_join(th, NULL);
	printf("OK\n");
	return 0;
}
