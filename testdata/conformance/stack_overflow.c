// Overflows of the main thread's stack, each in a forked child: with the
// default limit, caught on an alternate signal stack (the depth reached is
// printed); after the program lowered its own RLIMIT_STACK to 1 MiB; and in
// a program it execs under that limit. Replay once kept the first limit
// (setrlimit was only emulated) and the stack ended elsewhere
// ("expected rbp=0x7fffffeff3d0, got 0x7fffff7ff2b0").
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long depth;

static long recurse(long n) {
	volatile char frame[1000];
	frame[0] = n;
	depth = n;
	return recurse(n + 1) + frame[0];
}

static void caught(int sig) {
	char msg[64];
	int n = snprintf(msg, sizeof msg, "overflow caught after %ld frames\n", depth > 100 ? 100 : depth);
	write(1, msg, n);
	_exit(0);
}

static void overflow_child(const char *what, int altstack) {
	pid_t c = fork();
	if (c == 0) {
		if (altstack) {
			static char alt[1 << 16];
			stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt};
			sigaltstack(&ss, NULL);
			struct sigaction sa;
			memset(&sa, 0, sizeof sa);
			sa.sa_handler = caught;
			sa.sa_flags = SA_ONSTACK;
			sigaction(SIGSEGV, &sa, NULL);
		}
		recurse(0);
		_exit(1);
	}
	int st;
	waitpid(c, &st, 0);
	printf("%s: %s\n", what, WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : WEXITSTATUS(st) == 0 ? "handled" : "?");
}

int main(int argc, char **argv) {
	if (argc > 1) {
		recurse(0); // exec'd: overflow under the inherited limit
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	overflow_child("default limit, alternate stack", 1);
	overflow_child("default limit", 0);
	struct rlimit rl = {1 << 20, 1 << 20};
	if (setrlimit(RLIMIT_STACK, &rl) != 0)
		perror("setrlimit");
	overflow_child("1 MiB limit, alternate stack", 1);
	overflow_child("1 MiB limit", 0);
	pid_t c = fork();
	if (c == 0) {
		execl("/proc/self/exe", argv[0], "overflow", (char *)NULL);
		_exit(2);
	}
	int st;
	waitpid(c, &st, 0);
	printf("exec'd under 1 MiB: %s\n", WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "?");
	printf("OK\n");
	return 0;
}
