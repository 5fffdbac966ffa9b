// execother: forks; the child calls before_exec, then execs the program
// given as argv[1] (another one: its main is elsewhere); the parent waits.
// Breakpoints in the child must follow the exec: the addresses resolved in
// the parent's program mean nothing in the new one.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) int before_exec(int n) { return n * 2; }

int main(int argc, char **argv) {
	if (argc < 2)
		return 2;
	pid_t pid = fork();
	if (pid == 0) {
		before_exec(21);
		execl(argv[1], argv[1], (char *)0);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	printf("child %d\n", WEXITSTATUS(st));
	return 0;
}
