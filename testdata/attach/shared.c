// Memory shared with a process that is not recorded: before rewind
// attaches, this program maps anonymous shared memory and forks a child
// that adds 7 to a count in it each time it is asked, over a pipe, and
// answers over another once done. Commands on stdin: "tick" asks the child
// and waits for its answer, "get" prints the count it reads in the shared
// memory, "x" ends both. With -d it forks away from its parent first, as a
// daemon does. It prints "pid P" (its own, not the child's).
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "detach.h"

int main(int argc, char **argv) {
	detach_if_asked(argc, argv);
	volatile long *count = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int ask[2], done[2];
	if (count == MAP_FAILED || pipe(ask) < 0 || pipe(done) < 0)
		return 1;
	pid_t counter = fork();
	if (counter == 0) {
		char c;
		while (read(ask[0], &c, 1) == 1) {
			*count += 7;
			if (write(done[1], &c, 1) != 1)
				return 1;
		}
		return 0;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("pid %d\n", getpid());
	char line[64], c = 't';
	while (fgets(line, sizeof line, stdin) && line[0] != 'x') {
		if (strncmp(line, "tick", 4) == 0) {
			if (write(ask[1], &c, 1) != 1 || read(done[0], &c, 1) != 1)
				return 1;
		} else {
			printf("count %ld\n", *count);
		}
	}
	kill(counter, SIGKILL);
	return 0;
}
