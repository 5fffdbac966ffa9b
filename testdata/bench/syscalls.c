// syscalls: a loop of cheap system calls, the case where every call is a
// ptrace stop (two when recording) and the recorder's own work must stay small
// next to it.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 20000;
	long sum = 0;
	for (long i = 0; i < n; i++)
		sum += getppid() & 1;
	printf("%ld\n", sum);
	return 0;
}
