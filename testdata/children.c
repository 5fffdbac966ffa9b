// children.c: child processes run unrecorded while a SIGCHLD handler in the
// recorded process counts their deaths: vfork+execve, posix_spawn, and fork
// (the child computes and exits 7). How many SIGCHLDs arrive (they coalesce)
// and when varies between native runs.
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sigcount.h"

extern char **environ;

int main(void) {
	count_sigchld();

	int status;
	pid_t pid = vfork();
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	printf("vfork child: exit %d\n", WEXITSTATUS(status));

	char *argv[] = {"true", NULL};
	fflush(stdout);
	if (posix_spawnp(&pid, "true", NULL, NULL, argv, environ) != 0) {
		perror("posix_spawnp");
		return 1;
	}
	waitpid(pid, &status, 0);
	printf("posix_spawn child: exit %d\n", WEXITSTATUS(status));

	pid = fork();
	if (pid == 0) {
		unsigned long x = 1;
		for (int i = 0; i < 1000000; i++)
			x = x * 6364136223846793005UL + 1;
		_exit(7 + (int)(x & 0));
	}
	waitpid(pid, &status, 0);
	printf("fork child: exit %d\n", WEXITSTATUS(status));
	printf("sigchld handled: %d\n", sigchld > 0);
	return 0;
}
