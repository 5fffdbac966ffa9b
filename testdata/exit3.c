// exit3.c: a trivial program that prints a line and returns 3, to check that
// the recorder passes the program's exit status through.
#include <stdio.h>

int main(void) {
	printf("exiting with 3\n");
	return 3;
}
