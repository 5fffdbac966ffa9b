// A tracer that runs its tracee's system calls itself, as user-mode kernels
// and sandboxes do with PTRACE_SYSEMU: the child stops at each call's
// entry, the kernel skips the call, and the parent answers it by setting
// the result (PTRACE_SETREGS, or PTRACE_POKEUSER of rax). Skipped are a
// getpid and a getppid (made-up answers), a write to standard output
// (which must not appear), an mmap (an address nothing maps) and a mkdir
// (the directory must not exist after). A marked call ends the emulation:
// the child is let go with PTRACE_CONT and prints what it was told.
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAGIC 0x5eed
#define FAKEMAP 0x7e57000000L

static void fail(const char *what) {
	printf("FAIL %s: %s\n", what, strerror(errno));
	exit(1);
}

static void child(const char *dir) {
	if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0)
		_exit(10);
	raise(SIGSTOP);
	long pid = syscall(SYS_getpid);
	long ppid = syscall(SYS_getppid);
	long wrote = syscall(SYS_write, 1, "this must not appear\n", 21);
	long map = syscall(SYS_mmap, 0, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long made = syscall(SYS_mkdir, dir, 0700);
	syscall(SYS_getpgid, MAGIC);
	struct stat st;
	printf("told: getpid %ld, getppid %ld, write %ld, mmap %#lx, mkdir %ld; dir exists %d\n", pid, ppid,
	       wrote, map, made, stat(dir, &st) == 0);
	_exit(0);
}

int main(void) {
	setvbuf(stdout, NULL, _IONBF, 0);
	char dir[64];
	snprintf(dir, sizeof dir, "/tmp/rewind-sysemu-%d", (int)getpid());
	pid_t c = fork();
	if (c < 0)
		fail("fork");
	if (c == 0)
		child(dir);
	int st;
	if (waitpid(c, &st, 0) != c || !WIFSTOPPED(st) || WSTOPSIG(st) != SIGSTOP)
		fail("first stop");
	int skipped = 0;
	if (ptrace(PTRACE_SYSEMU, c, 0, 0) != 0)
		fail("PTRACE_SYSEMU");
	for (;;) {
		if (waitpid(c, &st, 0) != c)
			fail("waitpid");
		if (!WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP) {
			printf("unexpected status %#x\n", st);
			return 1;
		}
		struct user_regs_struct regs;
		if (ptrace(PTRACE_GETREGS, c, 0, &regs) != 0)
			fail("PTRACE_GETREGS");
		skipped++;
		long nr = regs.orig_rax, ret = -ENOSYS;
		switch (nr) {
		case SYS_getpid:
			ret = 1000;
			break;
		case SYS_getppid:
			ret = 999;
			break;
		case SYS_write:
			ret = regs.rdx;
			break;
		case SYS_mmap:
			ret = FAKEMAP;
			break;
		case SYS_mkdir:
			ret = 0;
			break;
		case SYS_getpgid:
			ret = regs.rdi == MAGIC ? 0 : -EINVAL;
			break;
		}
		if (nr == SYS_write || nr == SYS_mkdir) {
			// Through the struct user: as some tracers do.
			if (ptrace(PTRACE_POKEUSER, c, offsetof(struct user, regs.rax), ret) != 0)
				fail("PTRACE_POKEUSER");
		} else {
			regs.rax = ret;
			if (ptrace(PTRACE_SETREGS, c, 0, &regs) != 0)
				fail("PTRACE_SETREGS");
		}
		if (nr == SYS_getpgid) {
			if (ptrace(PTRACE_CONT, c, 0, 0) != 0)
				fail("PTRACE_CONT");
			break;
		}
		if (ptrace(PTRACE_SYSEMU, c, 0, 0) != 0)
			fail("PTRACE_SYSEMU");
	}
	if (waitpid(c, &st, 0) != c || !WIFEXITED(st))
		fail("end");
	printf("calls skipped: %d, child exited %d\n", skipped, WEXITSTATUS(st));
	rmdir(dir);
	printf("OK\n");
	return 0;
}
