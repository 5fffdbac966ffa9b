// code: 159
// A seccomp filter, installed with the seccomp() system call and
// SECCOMP_FILTER_FLAG_TSYNC while a second thread waits on a pipe, kills
// the whole process (SECCOMP_RET_KILL_PROCESS) at getppid: the program dies
// of SIGSYS that no handler or mask stops. Replay must die the same way,
// where it did, and not wait forever for a death nothing causes.
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int fds[2];

static void *waiter(void *arg) {
	char c;
	(void)arg;
	read(fds[0], &c, 1); // never written: the kill ends it
	return NULL;
}

static void ignore(int sig) { (void)sig; }

int main(void) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pipe(fds))
		return 1;
	pthread_t th;
	if (pthread_create(&th, NULL, waiter, NULL))
		return 1;
	// A handler does not save the process from a KILL verdict.
	signal(SIGSYS, ignore);
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof f / sizeof f[0], f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return 1;
	long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
	if (r != 0) {
		printf("seccomp: %ld\n", r);
		return 1;
	}
	printf("OK\n");
	syscall(SYS_getppid);
	printf("still alive\n");
	return 0;
}
