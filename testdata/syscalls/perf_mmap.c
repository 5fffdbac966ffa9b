// Maps the ring buffer of a software perf counter: rewind refuses the mmap
// with ENODEV (the kernel fills the buffer outside system calls) and warns.
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void) {
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof a;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.exclude_kernel = 1;
	int fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		printf("perf_event_open: %s\n", strerror(errno));
		return 2;
	}
	void *ring = mmap(NULL, 2 * sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	printf("mmap: %s\n", ring == MAP_FAILED ? strerror(errno) : "mapped");
	return 0;
}
