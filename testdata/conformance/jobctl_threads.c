// Stop and continue a multi-threaded process: each of the child's three
// threads echoes bytes from one pipe to another. Stopped with SIGSTOP, none
// may answer (the parent gives them a while: an answer then is a thread
// that kept running); continued with SIGCONT, they answer. Then the same
// with the child stopped by a SIGTSTP sent to one of its threads (the whole
// process stops). The child ends killed by SIGKILL while stopped.
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jobgroup.h"

enum { nthreads = 3 };

static int in[2], out[2], tids[2];

static void *echo(void *arg) {
	(void)arg;
	pid_t tid = syscall(SYS_gettid);
	if (write(tids[1], &tid, sizeof tid) != sizeof tid)
		_exit(1);
	for (;;) {
		char c;
		if (read(in[0], &c, 1) != 1 || write(out[1], &c, 1) != 1)
			_exit(1);
	}
	return NULL;
}

static void child(void) {
	pthread_t t;
	for (int i = 1; i < nthreads; i++)
		pthread_create(&t, NULL, echo, NULL);
	echo(NULL);
}

static void waitfor(pid_t c, int opts, const char *want) {
	int st;
	if (waitpid(c, &st, opts) != c) {
		perror("waitpid");
		exit(1);
	}
	char got[64];
	if (WIFSTOPPED(st))
		snprintf(got, sizeof got, "stopped by %s", strsignal(WSTOPSIG(st)));
	else if (WIFCONTINUED(st))
		snprintf(got, sizeof got, "continued");
	else if (WIFSIGNALED(st))
		snprintf(got, sizeof got, "killed by %s", strsignal(WTERMSIG(st)));
	else
		snprintf(got, sizeof got, "status %#x", st);
	printf("%s\n", got);
	if (strcmp(got, want) != 0) {
		printf("FAIL: want %s\n", want);
		exit(1);
	}
}

// answers reads n answers.
static void answers(int n) {
	char buf[nthreads];
	for (int got = 0; got < n;) {
		ssize_t k = read(out[0], buf, n - got);
		if (k <= 0)
			exit(1);
		got += k;
	}
	printf("%d answers\n", n);
}

// echoes sends n bytes and reads the n answers.
static void echoes(int n) {
	if (write(in[1], "abc", n) != n)
		exit(1);
	answers(n);
}

// silent sends n bytes to a stopped child and checks none is answered.
static void silent(int n) {
	if (write(in[1], "abc", n) != n)
		exit(1);
	struct pollfd p = {.fd = out[0], .events = POLLIN};
	if (poll(&p, 1, 200) != 0) {
		printf("FAIL: a stopped thread answered\n");
		exit(1);
	}
	printf("no answer while stopped\n");
}

// cycle stops the child with sig, sent to the process or to its thread
// tid, checks that no thread answers, continues it and reads the answers.
static void cycle(pid_t c, pid_t tid, int sig, const char *want) {
	if (tid)
		syscall(SYS_tgkill, c, tid, sig);
	else
		kill(c, sig);
	waitfor(c, WUNTRACED, want);
	silent(nthreads);
	kill(c, SIGCONT);
	waitfor(c, WCONTINUED, "continued");
	answers(nthreads);
}

int main(void) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pipe(in) || pipe(out) || pipe(tids))
		return 1;
	pid_t c = fork_job(child);
	pid_t tid[nthreads];
	for (int i = 0; i < nthreads; i++)
		if (read(tids[0], &tid[i], sizeof tid[i]) != sizeof tid[i])
			return 1;
	echoes(nthreads);

	cycle(c, 0, SIGSTOP, "stopped by Stopped (signal)");
	// To one thread, not the main one.
	cycle(c, tid[0] == c ? tid[1] : tid[0], SIGTSTP, "stopped by Stopped");

	kill(c, SIGSTOP);
	waitfor(c, WUNTRACED, "stopped by Stopped (signal)");
	kill(c, SIGKILL);
	waitfor(c, 0, "killed by Killed");
	printf("OK\n");
	return 0;
}
