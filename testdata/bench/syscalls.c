// syscalls: a loop of cheap system calls, the case where every call is a
// ptrace stop (two when recording) and the recorder's own work must stay small
// next to it. argv[1] is the number of calls, argv[2] the call: getppid (the
// default) or close (of a descriptor that is not open, as a program closing
// descriptors it does not know about does).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 20000;
	int useClose = argc > 2 && strcmp(argv[2], "close") == 0;
	long sum = 0;
	for (long i = 0; i < n; i++)
		sum += (useClose ? close(1000) : getppid()) & 1;
	printf("%ld\n", sum);
	return 0;
}
