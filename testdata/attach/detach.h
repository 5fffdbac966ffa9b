// What the attach tests' programs share: with -d, they detach from the
// test as a daemon does, so that rewind attaches to a process that is
// not its child nor the test's.
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// detach_if_asked: with -d as the first argument, the program forks, the
// parent exits (1 if fork failed) and the child goes on in a session of
// its own.
static void detach_if_asked(int argc, char **argv) {
	if (argc > 1 && strcmp(argv[1], "-d") == 0) {
		pid_t child = fork();
		if (child != 0)
			exit(child < 0);
		setsid();
	}
}
