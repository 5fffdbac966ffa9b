// A filter that kills the process at any system call number it does not
// know (beyond the table), as allowlist sandboxes do, then calls rewind
// refuses or answers itself: pthread_create (glibc tries clone3, and the new
// thread registers rseq) and prctl(PR_SET_TSC). The filter must judge the
// calls the program made, not a number rewind put in their place.
#define _GNU_SOURCE
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *worker(void *arg) {
	*(int *)arg = 1;
	return NULL;
}

int main(void) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	// The architecture first, then the number, as generated filters do.
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 1024, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof f / sizeof f[0], f};
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
	if (r != 0)
		return 1;
	int ran[3] = {0};
	for (int i = 0; i < 3; i++) {
		pthread_t th;
		if (pthread_create(&th, NULL, worker, &ran[i]) || pthread_join(th, NULL))
			return 1;
	}
	printf("threads ran: %d %d %d\n", ran[0], ran[1], ran[2]);
	r = prctl(PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0);
	printf("PR_SET_TSC: %ld\n", r);
	printf("OK\n");
	return 0;
}
