// rseqlate.c: a service whose thread registers an rseq area while rewind
// records it (record -p), as a thread pthread_create made just before the
// attach does when it first runs (glibc makes a failed registration fatal
// then). On "go" (stdin) a new thread registers its own area and says what
// rseq answered; on "check", after the detach, it registers the same area
// again, which the kernel refuses (EBUSY) when the first one holds.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static struct {
	unsigned cpu_id_start, cpu_id;
	unsigned long long cs;
	unsigned flags, pad[3];
} __attribute__((aligned(32))) area;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int step;

static long reg(void) {
	long r = syscall(SYS_rseq, &area, sizeof area, 0, 0x53053053);
	return r < 0 ? -errno : r;
}

static void *thread(void *arg) {
	printf("rseq %ld\n", reg());
	pthread_mutex_lock(&mu);
	while (step < 2)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	printf("again %ld\n", reg());
	return arg;
}

int main(void) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("pid %d\n", getpid());
	char line[64];
	pthread_t t;
	while (fgets(line, sizeof line, stdin)) {
		if (strncmp(line, "go", 2) == 0) {
			pthread_create(&t, NULL, thread, NULL);
		} else if (strncmp(line, "check", 5) == 0) {
			pthread_mutex_lock(&mu);
			step = 2;
			pthread_cond_signal(&cv);
			pthread_mutex_unlock(&mu);
			pthread_join(t, NULL);
			return 0;
		}
	}
	return 0;
}
