// code: 134
// The program sends SIGABRT to its whole process group (kill(0, …)),
// which rewind shares while recording: rewind must survive it.
#include <signal.h>
#include <stdio.h>

int main(void) {
	printf("OK\n");
	fflush(stdout);
	kill(0, SIGABRT);
	printf("not reached\n");
	return 0;
}
