// portable.c: a small program whose recording is replayed after its
// executable, loader and libc are gone or replaced (e2e/portable_test.go):
// a global written in a loop, a heap string, a line of output.
#include <stdio.h>
#include <stdlib.h>

int counter;

int main(int argc, char **argv) {
	for (int i = 0; i < 1000; i++)
		counter += i;
	char *p = malloc(100);
	snprintf(p, 100, "counter=%d args=%d", counter, argc);
	puts(p);
	free(p);
	return 0;
}
