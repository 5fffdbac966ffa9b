// Run by `unshare -fp` (e2e/namespaces_test.go): says which pids it sees
// in its pid namespace, forks a child that does too, and exits with a
// status the test checks. With an argument "proc", it also reads its pid
// from /proc/self/stat (a /proc of the namespace: --mount-proc).
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("pid %d ppid %d\n", getpid(), getppid());
	if (argc > 1 && strcmp(argv[1], "proc") == 0) {
		FILE *f = fopen("/proc/self/stat", "r");
		int pid = -1;
		if (f && fscanf(f, "%d", &pid) == 1)
			printf("/proc/self is %d\n", pid);
		if (f)
			fclose(f);
	}
	pid_t c = fork();
	if (c == 0) {
		printf("child pid %d ppid %d\n", getpid(), getppid());
		_exit(6);
	}
	int st;
	pid_t w = waitpid(c, &st, 0);
	printf("waited %d (forked %d): exit %d\n", w, c, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 5;
}
