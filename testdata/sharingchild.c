// sharingchild: children that share their parent's memory until they exec
// or exit, as vfork's and posix_spawn's do. A vfork child stores into a
// global before its exec, and posix_spawnp's child, failing to exec a
// program that is not there, writes the error where its parent reads it.
// A replay focused on the parent (replay -p) must run those children that
// far: without their stores, the parent prints other values.
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
static volatile int x;

__attribute__((noinline)) static void report(int spawned, int missing) {
	printf("x %d spawned %d missing %d\n", x, spawned, missing);
}

int main(void) {
	pid_t p = vfork();
	if (p == 0) {
		x = 42;
		execl("/bin/true", "true", (char *)0);
		_exit(127);
	}
	int st;
	waitpid(p, &st, 0);

	char *ok[] = {"true", NULL};
	pid_t q;
	int spawned = posix_spawnp(&q, "true", NULL, NULL, ok, environ);
	if (spawned == 0)
		waitpid(q, &st, 0);
	char *none[] = {"rewind-no-such-program", NULL};
	int missing = posix_spawnp(&q, "rewind-no-such-program", NULL, NULL, none, environ);
	report(spawned, missing);
	return missing == ENOENT ? 0 : 1;
}
