// Nested pid namespaces. The program unshares a pid namespace and forks A
// (pid 1 there); A unshares another and forks B (pid 1 in the inner
// namespace, 2 in the outer one). In B: a thread; a grandchild that exits
// with a status, whose SIGCHLD (taken by a handler) carries its namespace
// pid; a grandchild killed with SIGTERM by namespace pid; an orphan whose
// parent exits first, reparented to B (the namespace's init), which then
// waits for it. Every pid is the one the namespace shows, and every wait
// status is reported. Without the privilege, see pidns_unshare.c.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t got_pid, got_code, got_status, got;

static void on_chld(int sig, siginfo_t *si, void *uc) {
	(void)sig;
	(void)uc;
	got_pid = si->si_pid;
	got_code = si->si_code;
	got_status = si->si_status;
	got = 1;
}

static void *thread_main(void *arg) {
	(void)arg;
	printf("B thread: tid %ld\n", (long)syscall(SYS_gettid));
	return NULL;
}

static void report(const char *who, pid_t want, int st) {
	if (WIFEXITED(st))
		printf("%s: waited %d, exit %d\n", who, want, WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		printf("%s: waited %d, signal %d\n", who, want, WTERMSIG(st));
	else
		printf("%s: waited %d, status %#x\n", who, want, st);
}

static int wait_for(const char *who, pid_t pid) {
	int st;
	pid_t w = waitpid(pid, &st, 0);
	if (w != pid) {
		printf("%s: waitpid(%d) = %d (%s)\n", who, pid, w, strerror(errno));
		exit(20);
	}
	report(who, w, st);
	return st;
}

// B is the init of the inner namespace.
static int b_main(void) {
	printf("B: pid %d ppid %d\n", getpid(), getppid());
	pthread_t th;
	if (pthread_create(&th, NULL, thread_main, NULL) != 0)
		return 30;
	pthread_join(th, NULL);

	// A child that exits with 7: its SIGCHLD, delivered by sigsuspend.
	struct sigaction sa = {0};
	sa.sa_sigaction = on_chld;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGCHLD, &sa, NULL);
	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	pid_t c = fork();
	if (c == 0) {
		printf("C: pid %d ppid %d\n", getpid(), getppid());
		_exit(7);
	}
	while (!got)
		sigsuspend(&old);
	printf("B: SIGCHLD from %d (is C %d) code %d status %d\n", got_pid, got_pid == c, got_code, got_status);
	wait_for("B", c);
	sa.sa_handler = SIG_DFL;
	sa.sa_flags = 0;
	sigaction(SIGCHLD, &sa, NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);

	// A child killed by namespace pid.
	int ready[2];
	if (pipe(ready) != 0)
		return 31;
	pid_t d = fork();
	if (d == 0) {
		close(ready[0]);
		printf("D: pid %d\n", getpid());
		close(ready[1]);
		for (;;)
			pause();
	}
	close(ready[1]);
	char x;
	read(ready[0], &x, 1); // D has printed
	close(ready[0]);
	printf("B: kill(%d, SIGTERM) = %d\n", d, kill(d, SIGTERM));
	wait_for("B", d);

	// An orphan: E forks F and exits; F is then B's child.
	int go[2];
	if (pipe(go) != 0)
		return 32;
	pid_t e = fork();
	if (e == 0) {
		pid_t f = fork();
		if (f == 0) {
			close(go[1]);
			read(go[0], &x, 1); // E is gone
			printf("F: pid %d ppid %d\n", getpid(), getppid());
			_exit(4);
		}
		printf("E: pid %d forked F %d\n", getpid(), f);
		_exit(0);
	}
	close(go[0]);
	wait_for("B", e);
	close(go[1]);
	int st;
	pid_t f = wait(&st); // F, reparented to B
	report("B", f, st);
	printf("B: no children left %d\n", wait(NULL) == -1 && errno == ECHILD);
	return 6;
}

// A is the init of the outer namespace.
static int a_main(void) {
	printf("A: pid %d ppid %d\n", getpid(), getppid());
	if (unshare(CLONE_NEWPID) != 0) {
		printf("A: unshare: %s\n", strerror(errno));
		return 40;
	}
	pid_t b = fork();
	if (b == 0)
		_exit(b_main());
	printf("A: forked B %d\n", b);
	wait_for("A", b);
	return 8;
}

int main(void) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (unshare(CLONE_NEWPID) != 0 && (errno != EPERM || unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0)) {
		printf("no pid namespace here: %s\nOK\n", strerror(errno));
		return 0;
	}
	pid_t a = fork();
	if (a == 0)
		_exit(a_main());
	int st;
	if (waitpid(a, &st, 0) != a || !WIFEXITED(st) || WEXITSTATUS(st) != 8) {
		printf("main: bad status of A %#x\n", st);
		return 1;
	}
	printf("OK\n");
	return 0;
}
