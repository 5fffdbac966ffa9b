// A process tree: fork, vfork+exec, posix_spawn, a grandchild, an orphan
// whose parent dies first, a child that crashes, a child that execs this
// program again; every process prints, the parent waits for its children.
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void crash(void) {
	volatile int *p = NULL;
	*p = 1;
}

static int wait_one(pid_t pid, const char *what) {
	int st;
	if (waitpid(pid, &st, 0) != pid) {
		perror("waitpid");
		exit(1);
	}
	if (WIFEXITED(st))
		printf("%s: exit %d\n", what, WEXITSTATUS(st));
	else
		printf("%s: killed by signal %d\n", what, WTERMSIG(st));
	fflush(stdout);
	return st;
}

int main(int argc, char **argv) {
	if (argc > 1 && strcmp(argv[1], "again") == 0) {
		printf("re-exec'd: pid differs from parent: %d\n", getpid() != getppid());
		return 4;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("parent starts\n");

	pid_t pid = fork();
	if (pid == 0) {
		printf("child computes\n");
		unsigned long x = 1;
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005UL + 1;
		_exit(3 + (int)(x & 0));
	}
	wait_one(pid, "fork child");

	pid = vfork();
	if (pid == 0) {
		execl("/bin/echo", "echo", "vfork child exec'd echo", (char *)NULL);
		_exit(127);
	}
	wait_one(pid, "vfork child");

	char *sargv[] = {"sh", "-c", "echo spawned sh; exit 5", NULL};
	if (posix_spawn(&pid, "/bin/sh", NULL, NULL, sargv, environ) != 0)
		return 1;
	wait_one(pid, "spawned sh");

	pid = fork();
	if (pid == 0) {
		pid_t g = fork();
		if (g == 0) {
			printf("grandchild\n");
			_exit(6);
		}
		wait_one(g, "grandchild");
		_exit(7);
	}
	wait_one(pid, "middle child");

	// An orphan: the middle process exits at once, the orphan goes on and
	// reports through a pipe once its parent is gone.
	int fds[2];
	pipe(fds);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		pid_t parent = getpid();
		if (fork() == 0) {
			while (getppid() == parent)
				usleep(1000);
			write(fds[1], "orphan\n", 7);
			_exit(0);
		}
		_exit(0);
	}
	close(fds[1]);
	wait_one(pid, "orphan's parent");
	char buf[16] = {0};
	read(fds[0], buf, sizeof buf - 1);
	printf("read from orphan: %s", buf);

	pid = fork();
	if (pid == 0)
		crash();
	wait_one(pid, "crashing child");

	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], "again", (char *)NULL);
		_exit(127);
	}
	wait_one(pid, "re-exec'd child");
	printf("OK\n");
	return 0;
}
