// flags: -O2 -mrdrnd
// A child forked after rdrand was patched inherits the traps: its rdrand is
// recorded too (a trap nobody answered would kill it with SIGILL), as is the
// parent's, before and after the fork; the child's values are printed, so
// the replay of the tree gives them back byte for byte. A vfork child shares
// the parent's memory (and its table of sites) and execs at once.
#include <cpuid.h>
#include <immintrin.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static unsigned long long rand64(void) {
	unsigned long long v;
	while (!_rdrand64_step(&v))
		;
	return v;
}

int main(void) {
	unsigned a, b, c, d;
	if (!(__get_cpuid(1, &a, &b, &c, &d) && (c & bit_RDRND))) {
		printf("this CPU has no rdrand\nOK\n");
		return 0;
	}
	printf("parent before fork: %016llx\n", rand64());
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		unsigned long long x = rand64(), y = rand64();
		printf("child: %016llx %016llx\n", x, y);
		fflush(stdout);
		_exit(x == y ? 3 : 0);
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		printf("fork or wait failed\n");
		return 1;
	}
	printf("child: %s %d\n", WIFEXITED(status) ? "exit" : "signal",
	       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 1;
	char *argv[] = {"true", NULL};
	if (posix_spawnp(&pid, "true", NULL, NULL, argv, environ) != 0 || waitpid(pid, &status, 0) != pid ||
	    !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		printf("posix_spawn (vfork) failed\n");
		return 1;
	}
	printf("parent after fork: %016llx\n", rand64());
	printf("OK\n");
	return 0;
}
