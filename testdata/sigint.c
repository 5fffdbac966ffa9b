// sigint.c: a program that handles Ctrl-C. It prints "ready", then sleeps
// in a loop; each SIGINT runs its handler, which counts it. With an
// argument N it exits after N of them ("done after N"); without, it runs
// until it is killed. With "check", it only says whether it started with
// SIGINT ignored (nohup, a shell's background job) and exits.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t got;

static void on_int(int sig)
{
	(void)sig;
	got++;
	static const char msg[] = "handler: SIGINT\n";
	write(1, msg, sizeof msg - 1);
}

int main(int argc, char **argv)
{
	struct sigaction old;
	sigaction(SIGINT, NULL, &old);
	if (argc > 1 && strcmp(argv[1], "check") == 0) {
		printf("SIGINT at start: %s\n", old.sa_handler == SIG_IGN ? "ignored" : "default");
		return 0;
	}
	int want = argc > 1 ? atoi(argv[1]) : 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_int;
	sigaction(SIGINT, &sa, NULL);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		usleep(10000);
		if (want > 0 && got >= want) {
			printf("done after %d\n", (int)got);
			return 0;
		}
	}
}
