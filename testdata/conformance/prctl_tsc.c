// prctl(PR_SET_TSC)/PR_GET_TSC over rewind's own PR_TSC_SIGSEGV: the default
// answer is PR_TSC_ENABLE; after PR_TSC_SIGSEGV rdtsc raises SIGSEGV
// (si_code SI_KERNEL) and a new thread inherits the mode; after
// PR_TSC_ENABLE rdtsc works again; an invalid mode fails with EINVAL.
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <x86intrin.h>

static __thread sigjmp_buf jb;
static __thread volatile int code;

static void on_segv(int sig, siginfo_t *si, void *uc) {
	(void)sig, (void)uc;
	code = si->si_code;
	siglongjmp(jb, 1);
}

// traps reports whether rdtsc raised SIGSEGV, and with which si_code.
static int traps(void) {
	if (sigsetjmp(jb, 1))
		return code;
	volatile unsigned long long t = __rdtsc();
	(void)t;
	return 0;
}

static int mode(void) {
	int m = -1;
	prctl(PR_GET_TSC, &m);
	return m;
}

static void *thread(void *arg) {
	(void)arg;
	printf("thread: mode %d, rdtsc traps with si_code %#x\n", mode(), traps());
	return NULL;
}

int main(void) {
	struct sigaction sa = {0};
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);

	int bad = 0;
	printf("default mode %d (PR_TSC_ENABLE %d)\n", mode(), PR_TSC_ENABLE);
	bad |= mode() != PR_TSC_ENABLE;
	printf("rdtsc traps: %#x\n", traps());
	bad |= traps() != 0;

	printf("set SIGSEGV: %d\n", prctl(PR_SET_TSC, PR_TSC_SIGSEGV));
	printf("mode %d\n", mode());
	bad |= mode() != PR_TSC_SIGSEGV;
	int c = traps();
	printf("rdtsc traps with si_code %#x (SI_KERNEL %#x)\n", c, SI_KERNEL);
	bad |= c != SI_KERNEL;
	pthread_t t;
	pthread_create(&t, NULL, thread, NULL);
	pthread_join(t, NULL);

	errno = 0;
	int r = prctl(PR_SET_TSC, 7);
	printf("invalid mode: %d %s, mode still %d\n", r, strerror(errno), mode());
	bad |= r != -1 || errno != EINVAL || mode() != PR_TSC_SIGSEGV;

	printf("set ENABLE: %d\n", prctl(PR_SET_TSC, PR_TSC_ENABLE));
	printf("mode %d, rdtsc traps: %#x\n", mode(), traps());
	bad |= mode() != PR_TSC_ENABLE || traps() != 0;
	unsigned long long a = __rdtsc(), b = __rdtsc();
	printf("rdtsc advances: %d\n", b >= a);
	if (bad)
		return 1;
	printf("OK\n");
	return 0;
}
