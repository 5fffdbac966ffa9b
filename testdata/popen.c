// popen.c: child processes. popen() runs a shell (fork/vfork+execve of
// /bin/sh, which forks echo/date) and reads its output through a pipe; `date
// +%N` prints nanoseconds, so the output varies. Then a fork()ed child exits
// 7 and the parent reaps it with waitpid.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
	FILE *p = popen("echo hello from child; date +%N", "r");
	if (p == NULL) {
		perror("popen");
		return 1;
	}
	char line[256];
	while (fgets(line, sizeof line, p) != NULL)
		printf("popen: %s", line);
	int st = pclose(p);
	printf("pclose status: %d (exit %d)\n", st, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	fflush(stdout);

	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0)
		_exit(7);
	int status;
	if (waitpid(pid, &status, 0) != pid) {
		perror("waitpid");
		return 1;
	}
	printf("child exited: %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
