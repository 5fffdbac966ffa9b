// Attaches with ptrace to a process outside the recording (its parent,
// rewind itself): rewind refuses it with EPERM, as a second tracer of a
// process it records or a tracer of one whose stops it cannot order, and
// warns once. (Attaching to a process of the recording is emulated: see
// testdata/conformance/ptrace_traceme.c.) Meant to be recorded only: run
// by itself it would stop its parent.
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

int main(void) {
	long r = ptrace(PTRACE_ATTACH, getppid(), NULL, NULL);
	printf("attach: %s\n", r == 0 ? "attached" : strerror(errno));
	r = ptrace(PTRACE_SEIZE, getppid(), NULL, NULL);
	printf("seize: %s\n", r == 0 ? "seized" : strerror(errno));
	return 0;
}
