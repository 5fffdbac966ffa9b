// forks.c: a fork-heavy workload, N runs of `sh -c 'exit 0'` one after the
// other (fork, exec of a shell, its exit, waitpid), as a build or a test
// runner does.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 200;
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			execl("/bin/sh", "sh", "-c", "exit 0", (char *)NULL);
			_exit(127);
		}
		int st;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "run %d failed\n", i);
			return 1;
		}
	}
	printf("%d runs\n", n);
	return 0;
}
