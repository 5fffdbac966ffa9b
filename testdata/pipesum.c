// pipesum.c: sums the numbers on standard input (a pipe), as
// `seq 100 | python3 -c 'import sys; print(sum(int(l) for l in sys.stdin))'`
// does, with what recording that python3 (a pyenv shim: bash, then the
// interpreter) goes through besides: rdtsc traps, a forked child whose
// SIGCHLD a handler takes, reads of a pipe that may be empty. Each of those
// makes the recorder or the replayer read and write registers.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include "sigcount.h"

int main(void) {
	count_sigchld();

	unsigned long long t0 = __rdtsc();
	pid_t child = fork();
	if (child == 0)
		_exit(7);

	long sum = 0;
	char line[64];
	while (fgets(line, sizeof line, stdin))
		sum += atol(line);

	int status;
	waitpid(child, &status, 0);
	unsigned long long t1 = __rdtsc();
	printf("sum: %ld\n", sum);
	printf("child: exit %d\n", WEXITSTATUS(status));
	printf("sigchld handled: %d\n", (int)sigchld);
	printf("rdtsc: %s\n", t1 > t0 ? "increasing" : "not increasing");
	return 0;
}
