// glibc's clocks, which call the vDSO: clock_gettime on each clock,
// clock_getres, gettimeofday, time and sched_getcpu (getcpu; rseq is refused
// when recorded). rewind patches the vDSO's functions into system calls, so
// every value printed is recorded and replays byte for byte.
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static long long ns(const struct timespec *ts) { return ts->tv_sec * 1000000000LL + ts->tv_nsec; }

int main(void) {
	const struct {
		clockid_t id;
		const char *name;
	} clocks[] = {
	    {CLOCK_REALTIME, "realtime"},
	    {CLOCK_MONOTONIC, "monotonic"},
	    {CLOCK_MONOTONIC_RAW, "monotonic_raw"},
	    {CLOCK_BOOTTIME, "boottime"},
	    {CLOCK_REALTIME_COARSE, "realtime_coarse"},
	    {CLOCK_MONOTONIC_COARSE, "monotonic_coarse"},
	    {CLOCK_PROCESS_CPUTIME_ID, "process_cputime"},
	    {CLOCK_THREAD_CPUTIME_ID, "thread_cputime"},
	};
	for (size_t i = 0; i < sizeof clocks / sizeof clocks[0]; i++) {
		struct timespec a, b, res;
		if (clock_gettime(clocks[i].id, &a) != 0 || clock_gettime(clocks[i].id, &b) != 0 ||
		    clock_getres(clocks[i].id, &res) != 0) {
			printf("%s: failed\n", clocks[i].name);
			return 1;
		}
		printf("%s: %lld %lld res %lld\n", clocks[i].name, ns(&a), ns(&b), ns(&res));
		if (ns(&b) < ns(&a) && clocks[i].id != CLOCK_REALTIME && clocks[i].id != CLOCK_REALTIME_COARSE) {
			printf("%s went back\n", clocks[i].name);
			return 1;
		}
	}
	struct timeval tv;
	struct timezone tz;
	if (gettimeofday(&tv, &tz) != 0) {
		printf("gettimeofday failed\n");
		return 1;
	}
	time_t t = time(NULL);
	printf("gettimeofday: %lld.%06ld time: %lld\n", (long long)tv.tv_sec, (long)tv.tv_usec, (long long)t);
	/* time() reads the coarse clock (the vDSO's), which may lag
	   gettimeofday's by a tick across a second's boundary. */
	if (t + 1 < tv.tv_sec || t > tv.tv_sec + 1) {
		printf("time and gettimeofday disagree\n");
		return 1;
	}
	int cpu = sched_getcpu();
	unsigned c, node;
	if (cpu < 0 || getcpu(&c, &node) != 0 || c >= (unsigned)sysconf(_SC_NPROCESSORS_CONF)) {
		printf("sched_getcpu %d getcpu %u\n", cpu, c);
		return 1;
	}
	printf("cpu: %d %u node %u\n", cpu, c, node);
	printf("OK\n");
	return 0;
}
