// execspread: a process that execs a program while another process of the
// recording computes is placed on another CPU at its exec, when rewind may
// use two or more; one that execs while only its parent, waiting for it,
// runs stays with the tracer. The exec'd child prints which it saw.
//
//	execspread busy|alone
//	execspread --child CPU,CPU...   (the exec'd child: its parent's CPUs)
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) != 0) {
		perror("sched_getaffinity");
		return 2;
	}
	if (argc > 2 && strcmp(argv[1], "--child") == 0) {
		cpu_set_t parent;
		CPU_ZERO(&parent);
		for (char *c = strtok(argv[2], ","); c; c = strtok(NULL, ","))
			CPU_SET(atoi(c), &parent);
		printf(CPU_EQUAL(&set, &parent) ? "stayed at exec\n" : "moved at exec\n");
		return 0;
	}
	if (argc < 2)
		return 2;
	char list[8192] = "";
	for (int c = 0, n = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			n += snprintf(list + n, sizeof list - n, "%s%d", n ? "," : "", c);
	pid_t busy = 0;
	if (strcmp(argv[1], "busy") == 0) {
		busy = fork();
		if (busy == 0) {
			volatile unsigned long x = 0;
			for (;;)
				x++;
		}
		struct timespec ts = {0, 50000000};
		nanosleep(&ts, NULL);
	}
	fflush(stdout);
	pid_t kid = fork();
	if (kid == 0) {
		execl("/proc/self/exe", argv[0], "--child", list, (char *)NULL);
		_exit(3);
	}
	int st;
	waitpid(kid, &st, 0);
	if (busy) {
		kill(busy, SIGKILL);
		waitpid(busy, NULL, 0);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 4;
}
