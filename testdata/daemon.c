// Starts a daemon the usual way and returns at once: fork, the parent
// prints and exits; the child calls setsid and forks again, and exits; the
// grandchild (the daemon) lets go of the standard streams and serves one
// request: it waits for a line on the FIFO argv[1], then answers on the
// FIFO argv[2] with its pid, the tracer /proc says it has, and whether
// rdtsc and getpid work in it (a recorder's traps left behind would kill
// it at the first rdtsc).
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <x86intrin.h>

static int tracerPid(void) {
	FILE *f = fopen("/proc/self/status", "r");
	if (f == NULL)
		return -1;
	char line[256];
	int pid = -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "TracerPid: %d", &pid) == 1)
			break;
	fclose(f);
	return pid;
}

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: daemon REQUEST-FIFO ANSWER-FIFO\n");
		return 2;
	}
	pid_t p = fork();
	if (p < 0) {
		perror("fork");
		return 1;
	}
	if (p > 0) {
		printf("parent done\n");
		return 0;
	}
	if (setsid() < 0)
		_exit(1);
	p = fork();
	if (p != 0)
		_exit(p < 0);
	int null = open("/dev/null", O_RDWR);
	if (null < 0)
		_exit(1);
	dup2(null, 0);
	dup2(null, 1);
	dup2(null, 2);
	close(null);
	int req = open(argv[1], O_RDONLY);
	char buf[64];
	if (req < 0 || read(req, buf, sizeof buf) <= 0)
		_exit(1);
	unsigned long long t0 = __rdtsc(), t1 = __rdtsc();
	char answer[128];
	int n = snprintf(answer, sizeof answer, "pid %d tracer %d rdtsc %s\n", (int)getpid(), tracerPid(),
	                 t1 >= t0 ? "ok" : "backwards");
	int ans = open(argv[2], O_WRONLY);
	if (ans < 0 || write(ans, answer, n) != n)
		_exit(1);
	return 0;
}
