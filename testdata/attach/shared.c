// Memory shared with a process that is not recorded: before rewind
// attaches, this program maps anonymous shared memory and forks a child
// that counts in it, every 5 ms. On "get" (stdin) it prints the count it
// reads there; "x" ends both. With -d it forks away from its parent first,
// as a daemon does. It prints "pid P" (its own, not the counter's).
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
	if (argc > 1 && strcmp(argv[1], "-d") == 0) {
		pid_t child = fork();
		if (child != 0)
			return child < 0;
		setsid();
	}
	volatile long *count = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (count == MAP_FAILED)
		return 1;
	pid_t counter = fork();
	if (counter == 0) {
		struct timespec ts = {0, 5000000};
		for (;;) {
			(*count)++;
			nanosleep(&ts, NULL);
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("pid %d\n", getpid());
	char line[64];
	while (fgets(line, sizeof line, stdin) && line[0] != 'x')
		printf("count %ld\n", *count);
	kill(counter, SIGKILL);
	return 0;
}
