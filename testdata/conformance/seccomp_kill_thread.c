// A filter installed by the main thread with prctl(PR_SET_SECCOMP) is
// inherited by the threads it creates afterwards; two of them are killed
// by SECCOMP_RET_KILL_THREAD, at getppid(1) and at read(99, ...) (a call
// that may block, which the recorder may log in two halves), while the main
// thread waits in pthread_join: those threads alone die (of SIGSYS), the
// kernel clears their tids and wakes the joins, and the program goes on
// (its own getppid is allowed). Replay must kill those threads at those
// calls, and only them.
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *byGetppid(void *arg) {
	(void)arg;
	syscall(SYS_getppid, 1);
	printf("thread: still alive after getppid\n");
	return NULL;
}

static void *byRead(void *arg) {
	char c;
	(void)arg;
	read(99, &c, 1);
	printf("thread: still alive after read\n");
	return NULL;
}

int main(void) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_read, 0, 3),
		// Only with a first argument of 1 (getppid) or 99 (read).
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 1, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_THREAD),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof f / sizeof f[0], f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("seccomp");
		return 1;
	}
	// One after the other: while a victim runs, the main thread waits for
	// it in the kernel, so that the tid the kernel clears at the victim's
	// death is seen at one point (a thread dying in the kernel while
	// another runs user code is a race of the recording).
	pthread_t a, b;
	if (pthread_create(&a, NULL, byGetppid, NULL) || pthread_join(a, NULL))
		return 1;
	if (pthread_create(&b, NULL, byRead, NULL) || pthread_join(b, NULL))
		return 1;
	printf("joined, parent %s\nOK\n", syscall(SYS_getppid, 0) == getppid() ? "same" : "differs");
	return 0;
}
