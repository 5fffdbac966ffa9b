// spreadcpu: two child processes that compute at the same time, each until
// its CPU affinity is no longer its parent's (the recorder moved it to a
// CPU of its own) or SECONDS pass. The parent prints whether one moved.
// Recorded by default on a machine with two CPUs or more, one moves; with
// --bind-to-cpu or --serial, none does, nor when the program chose its
// CPUs itself (CPU,CPU...: it binds itself to them first).
//
//	spreadcpu SECONDS [CPU,CPU...]
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

// compute spins until this process's affinity differs from start's (exit
// 0) or the deadline passes (exit 1).
static void compute(const cpu_set_t *start, double deadline) {
	volatile unsigned long x = 0;
	for (;;) {
		for (unsigned long i = 0; i < 2000000; i++)
			x += i;
		cpu_set_t set;
		if (sched_getaffinity(0, sizeof set, &set) == 0 && !CPU_EQUAL(&set, start))
			_exit(0);
		if (now() > deadline)
			_exit(1);
	}
}

int main(int argc, char **argv) {
	double deadline = now() + (argc > 1 ? atof(argv[1]) : 30);
	cpu_set_t start;
	if (argc > 2) {
		CPU_ZERO(&start);
		for (char *c = strtok(argv[2], ","); c; c = strtok(NULL, ","))
			CPU_SET(atoi(c), &start);
		if (sched_setaffinity(0, sizeof start, &start) != 0) {
			perror("sched_setaffinity");
			return 2;
		}
	}
	if (sched_getaffinity(0, sizeof start, &start) != 0) {
		perror("sched_getaffinity");
		return 2;
	}
	pid_t kids[2];
	for (int k = 0; k < 2; k++) {
		kids[k] = fork();
		if (kids[k] == 0)
			compute(&start, deadline);
	}
	int moved = 0, st;
	for (int left = 2; left > 0; left--) {
		pid_t p = wait(&st);
		if (p > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 && !moved) {
			moved = 1;
			for (int k = 0; k < 2; k++)
				if (kids[k] != p)
					kill(kids[k], SIGKILL);
		}
	}
	printf(moved ? "one moved\n" : "none moved\n");
	return 0;
}
