// A seccomp filter's verdicts other than KILL, each recorded and replayed:
// SECCOMP_RET_TRAP (a SIGSYS whose siginfo names the call, its address,
// the architecture and the filter's data), on getppid and on mmap, a call
// replay would otherwise re-execute (trapped, it never ran); ERRNO, on
// getpgrp and on mprotect; TRACE with no seccomp tracer (ENOSYS); LOG (the
// call runs); TRAP and ERRNO on execveat (the exec must not happen in
// replay either). The filter, installed with the seccomp() system call, is
// inherited by a forked child and kept across its exec of this program.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static volatile int trapped, trapNr, trapArch, trapErrno;
static volatile void *trapAddr;

static void onSigsys(int sig, siginfo_t *si, void *uc) {
	(void)sig;
	(void)uc;
	trapped++;
	trapNr = si->si_syscall;
	trapArch = si->si_arch;
	trapErrno = si->si_errno;
	trapAddr = si->si_call_addr;
}

// Checks the filter from a child, after fork or after exec.
static int childChecks(const char *who) {
	errno = 0;
	long r = syscall(SYS_getpgrp);
	printf("%s: getpgrp %ld %s\n", who, r, strerror(errno));
	return r == -1 && errno == EPERM ? 0 : 1;
}

int main(int argc, char **argv) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && strcmp(argv[1], "child") == 0)
		return childChecks("exec'd child");

	struct sigaction sa = {0};
	sa.sa_sigaction = onSigsys;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSYS, &sa, NULL);
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP | 0x2a),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 5),
		// Only an mmap of 12345 bytes is trapped: the C library maps too.
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 12345, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP | 7),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpgrp, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mprotect, 0, 4),
		// Only to PROT_EXEC alone: the dynamic loader of the exec'd child
		// makes pages read-only.
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PROT_EXEC, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getuid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE | 1),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_LOG),
		// execveat (the child's execve is allowed): TRAP without flags,
		// ERRNO with AT_SYMLINK_NOFOLLOW.
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_execveat, 0, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[4])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP | 9),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof f / sizeof f[0], f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) {
		perror("seccomp");
		return 1;
	}
	int bad = 0;

	long r = syscall(SYS_getppid);
	printf("getppid: %ld, trapped %d nr %d arch %#x data %d addr %s\n", r, trapped, trapNr, trapArch, trapErrno,
	       trapAddr ? "set" : "null");
	bad |= trapped != 1 || trapNr != SYS_getppid || trapArch != AUDIT_ARCH_X86_64 || trapErrno != 0x2a || !trapAddr;

	void *m = mmap(NULL, 12345, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	printf("mmap: trapped %d nr %d data %d\n", trapped, trapNr, trapErrno);
	bad |= trapped != 2 || trapNr != SYS_mmap || trapErrno != 7;
	(void)m;

	errno = 0;
	r = syscall(SYS_getpgrp);
	printf("getpgrp: %ld %s\n", r, strerror(errno));
	bad |= r != -1 || errno != EPERM;

	static char page[4096] __attribute__((aligned(4096)));
	errno = 0;
	r = mprotect(page, sizeof page, PROT_EXEC);
	printf("mprotect: %ld %s\n", r, strerror(errno));
	bad |= r != -1 || errno != EACCES;
	page[0] = 1; // still writable: the call never ran

	errno = 0;
	r = syscall(SYS_getuid);
	printf("getuid (TRACE, no seccomp tracer): %ld %s\n", r, strerror(errno));
	bad |= r != -1 || errno != ENOSYS;

	r = syscall(SYS_getpid);
	printf("getpid (LOG): %s\n", r == getpid() ? "runs" : "wrong");

	// A refused exec must not happen in replay either.
	char *trueArgv[] = {"true", NULL};
	r = syscall(SYS_execveat, AT_FDCWD, "/bin/true", trueArgv, environ, 0);
	printf("execveat (TRAP): %ld, trapped %d nr %d data %d\n", r, trapped, trapNr, trapErrno);
	bad |= trapped != 3 || trapNr != SYS_execveat || trapErrno != 9;
	errno = 0;
	r = syscall(SYS_execveat, AT_FDCWD, "/bin/true", trueArgv, environ, AT_SYMLINK_NOFOLLOW);
	printf("execveat (ERRNO): %ld %s\n", r, strerror(errno));
	bad |= r != -1 || errno != EPERM;

	pid_t pid = fork();
	if (pid == 0)
		_exit(childChecks("forked child"));
	int st;
	waitpid(pid, &st, 0);
	bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;

	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], "child", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;

	printf(bad ? "FAIL\n" : "OK\n");
	return bad;
}
