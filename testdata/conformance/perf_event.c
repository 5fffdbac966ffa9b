// perf_event_open of software events (task clock, CPU clock, page faults):
// enable, disable, PERF_EVENT_IOC_ID, read of the counter fd, an attr size
// the kernel rejects with E2BIG (writing back the size it knows), a
// hardware event (no PMU here: it may fail). Mapping a counter's ring
// buffer is refused by rewind: see e2e's TestRefusedCalls.
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int open_counter(uint32_t type, uint64_t config, uint32_t size) {
	char buf[512] = {0};
	struct perf_event_attr *a = (struct perf_event_attr *)buf;
	a->type = type;
	a->size = size;
	a->config = config;
	a->disabled = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	if (size > sizeof *a)
		buf[size - 1] = 1; // a field this kernel does not know, set
	int fd = syscall(SYS_perf_event_open, a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && errno == E2BIG)
		printf("E2BIG: the kernel's attr size %u\n", a->size);
	return fd;
}

int main(void) {
	int bad = 0;
	int fd = open_counter(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, sizeof(struct perf_event_attr));
	if (fd < 0) {
		printf("perf_event_open unavailable: %s\n", strerror(errno));
		printf("OK\n");
		return 0;
	}
	int cpu = open_counter(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, sizeof(struct perf_event_attr));
	int faults = open_counter(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, sizeof(struct perf_event_attr));
	uint64_t id = 0;
	int r = ioctl(fd, PERF_EVENT_IOC_ID, &id);
	printf("PERF_EVENT_IOC_ID %d, id set %d\n", r, id != 0);
	bad |= r != 0 || id == 0;
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	ioctl(cpu, PERF_EVENT_IOC_ENABLE, 0);
	ioctl(faults, PERF_EVENT_IOC_ENABLE, 0);
	volatile double x = 1;
	for (int i = 0; i < 2000000; i++)
		x = x * 1.0000001 + 1e-9;
	char *mem = malloc(1 << 20);
	memset(mem, 1, 1 << 20);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	ioctl(cpu, PERF_EVENT_IOC_DISABLE, 0);
	ioctl(faults, PERF_EVENT_IOC_DISABLE, 0);
	uint64_t task = 0, cpuclk = 0, pf = 0;
	ssize_t n = read(fd, &task, sizeof task);
	read(cpu, &cpuclk, sizeof cpuclk);
	read(faults, &pf, sizeof pf);
	printf("read %zd bytes: task clock > 0: %d, cpu clock > 0: %d\n", n, task > 0, cpuclk > 0);
	fprintf(stderr, "page faults %llu\n", (unsigned long long)pf);
	bad |= n != 8 || task == 0;
	fprintf(stderr, "task clock %llu ns\n", (unsigned long long)task);

	errno = 0;
	int big = open_counter(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 512);
	printf("oversized attr: %d %s\n", big, strerror(errno));
	bad |= big != -1 || errno != E2BIG;

	int hw = open_counter(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, sizeof(struct perf_event_attr));
	printf("hardware counter: %s\n", hw >= 0 ? "available" : strerror(errno));

	close(fd);
	close(cpu);
	close(faults);
	if (bad)
		return 1;
	printf("OK\n");
	return 0;
}
