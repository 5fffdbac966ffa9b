// forkcalls.c: N children forked one after the other, each asking getppid
// and exiting with what it got (mod 256) without exec'ing: the children run
// the parent's code, whose getppid site the first child's call taught the
// recorder (issue 23: the parent's copy is patched too, so later children
// need no stop there). Prints the number of children that saw their parent.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 20, ok = 0;
	pid_t me = getpid();
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(getppid() == me ? 0 : 1);
		int st;
		if (waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0)
			ok++;
	}
	printf("%d of %d children saw their parent\n", ok, n);
	return 0;
}
