// A debugger's use of ptrace, between two processes of the program: a forked
// child asks to be traced (PTRACE_TRACEME) and stops itself with SIGSTOP;
// the parent collects each stop with waitpid, counts them, reads the child's
// registers (GETREGS, PEEKUSER, GETFPREGS), memory (PEEKDATA) and siginfo,
// writes its memory (POKEDATA) and a register (SETREGS), continues it with a
// signal the child handles, is told of its exit (PTRACE_O_TRACEEXIT,
// GETEVENTMSG) and collects its status. A second child is attached to
// (PTRACE_ATTACH), stopped, checked and killed (PTRACE_KILL). Two more
// trace their exec: the SIGTRAP a tracee gets after it, and the exec event
// (PTRACE_O_TRACEEXEC) when asked for. The last tracer is not its
// tracee's parent: its wait gets the tracee's end. A tracer's wait for a
// tracee that does not stop is interrupted by a signal. A crash reporter's
// tracer sees its tracee's SIGSEGV first, then lets it die of it. A tracer
// follows its tracee's system calls (PTRACE_SYSCALL). Under rewind
// the recorder is the real tracer of both, and emulates the parent's tracing.
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long marker = 0x5245574e44; // "REWND"
static volatile long poked = 0;
static volatile sig_atomic_t got_usr1 = 0;

static void on_usr1(int sig) { (void)sig; got_usr1 = 1; }

// stop_here stops the calling process with SIGSTOP and returns what the
// tracer left in rax: the tracer sets it through SETREGS (the kernel
// returns tgkill's result there, 0, when nobody changes it).
static long __attribute__((noinline)) stop_here(void) {
	return syscall(SYS_tgkill, getpid(), getpid(), SIGSTOP);
}

static int fail(const char *what) {
	printf("FAIL: %s (%s)\n", what, strerror(errno));
	return 1;
}

static int traceme(void) {
	int stops = 0, st;
	pid_t child = fork();
	if (child == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
			_exit(100 + errno);
		signal(SIGUSR1, on_usr1);
		marker = 42;
		long r = stop_here();
		// The tracer poked 1234 and set rax to 77, then continued with SIGUSR1.
		_exit(r == 77 && poked == 1234 && got_usr1 ? 7 : 9);
	}
	if (waitpid(child, &st, 0) != child)
		return fail("waitpid for the first stop");
	if (!WIFSTOPPED(st) || WSTOPSIG(st) != SIGSTOP) {
		printf("FAIL: first stop: status %#x\n", st);
		return 1;
	}
	stops++;
	struct user_regs_struct regs;
	memset(&regs, 0, sizeof regs);
	if (ptrace(PTRACE_GETREGS, child, NULL, &regs) != 0)
		return fail("GETREGS");
	errno = 0;
	long rip = ptrace(PTRACE_PEEKUSER, child, (void *)offsetof(struct user_regs_struct, rip), NULL);
	if (errno != 0 || rip != (long)regs.rip)
		return fail("PEEKUSER rip");
	struct user_fpregs_struct fp;
	if (ptrace(PTRACE_GETFPREGS, child, NULL, &fp) != 0)
		return fail("GETFPREGS");
	errno = 0;
	long word = ptrace(PTRACE_PEEKDATA, child, &marker, NULL);
	printf("PEEKDATA marker: %ld\n", word);
	if (word != 42)
		return fail("PEEKDATA");
	siginfo_t si;
	memset(&si, 0, sizeof si);
	if (ptrace(PTRACE_GETSIGINFO, child, NULL, &si) != 0 || si.si_signo != SIGSTOP)
		return fail("GETSIGINFO");
	if (ptrace(PTRACE_POKEDATA, child, &poked, (void *)1234L) != 0)
		return fail("POKEDATA");
	if (ptrace(PTRACE_PEEKDATA, child, &poked, NULL) != 1234)
		return fail("PEEKDATA after POKEDATA");
	regs.rax = 77;
	if (ptrace(PTRACE_SETREGS, child, NULL, &regs) != 0)
		return fail("SETREGS");
	if (ptrace(PTRACE_SETOPTIONS, child, NULL, (void *)PTRACE_O_TRACEEXIT) != 0)
		return fail("SETOPTIONS");
	if (ptrace(PTRACE_CONT, child, NULL, (void *)SIGUSR1) != 0)
		return fail("CONT");
	if (waitpid(child, &st, 0) != child)
		return fail("waitpid for the exit event");
	stops++;
	if (!WIFSTOPPED(st) || st >> 8 != (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) {
		printf("FAIL: exit event: status %#x\n", st);
		return 1;
	}
	unsigned long msg = 0;
	if (ptrace(PTRACE_GETEVENTMSG, child, NULL, &msg) != 0)
		return fail("GETEVENTMSG");
	printf("exit event, status %lu\n", msg >> 8);
	if (ptrace(PTRACE_CONT, child, NULL, NULL) != 0)
		return fail("CONT after the exit event");
	if (waitpid(child, &st, 0) != child)
		return fail("waitpid for the exit");
	printf("child exited %d after %d stops\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1, stops);
	return !WIFEXITED(st) || WEXITSTATUS(st) != 7 || msg >> 8 != 7 || stops != 2;
}

// two_pipes makes the pipes a test and its children step each other with.
static int two_pipes(int a[2], int b[2]) {
	if (pipe(a) != 0 || pipe(b) != 0)
		return fail("pipe");
	return 0;
}

static int attach(void) {
	int go[2], ready[2], st;
	char c;
	if (two_pipes(go, ready))
		return 1;
	pid_t child = fork();
	if (child == 0) {
		close(go[1]);
		marker = 99;
		write(ready[1], "r", 1);
		read(go[0], &c, 1); // blocks until killed
		_exit(3);
	}
	close(go[0]);
	if (read(ready[0], &c, 1) != 1)
		return fail("read ready");
	if (ptrace(PTRACE_ATTACH, child, NULL, NULL) != 0)
		return fail("ATTACH");
	if (waitpid(child, &st, 0) != child)
		return fail("waitpid after ATTACH");
	if (!WIFSTOPPED(st) || WSTOPSIG(st) != SIGSTOP) {
		printf("FAIL: attach stop: status %#x\n", st);
		return 1;
	}
	errno = 0;
	long word = ptrace(PTRACE_PEEKDATA, child, &marker, NULL);
	printf("attached, PEEKDATA marker: %ld\n", word);
	if (word != 99)
		return fail("PEEKDATA of the attached child");
	if (ptrace(PTRACE_KILL, child, NULL, NULL) != 0)
		return fail("KILL");
	if (waitpid(child, &st, 0) != child)
		return fail("waitpid after KILL");
	printf("attached child killed by %s\n", WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "?");
	close(go[1]);
	return !WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL;
}

// stop_info waits for child's next stop, which must be by sig, and reads
// its siginfo.
static int stop_info(pid_t child, int sig, int *st, siginfo_t *si, const char *what) {
	if (waitpid(child, st, 0) != child || !WIFSTOPPED(*st) || WSTOPSIG(*st) != sig) {
		printf("FAIL: %s stop: status %#x\n", what, *st);
		return 1;
	}
	memset(si, 0, sizeof *si);
	if (ptrace(PTRACE_GETSIGINFO, child, NULL, si) != 0)
		return fail("GETSIGINFO");
	return 0;
}

// traced_exec runs this program again in a traced child ("exec-child":
// it exits 5 at once) and checks the stop its exec makes: a SIGTRAP sent
// by the kernel or, with PTRACE_O_TRACEEXEC set at an earlier stop, the
// exec event.
static int traced_exec(int event) {
	int st;
	pid_t child = fork();
	if (child == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
			_exit(100 + errno);
		if (event)
			raise(SIGSTOP);
		execl("/proc/self/exe", "ptrace_traceme", "exec-child", (char *)NULL);
		_exit(99);
	}
	if (event) {
		if (waitpid(child, &st, 0) != child || !WIFSTOPPED(st) || WSTOPSIG(st) != SIGSTOP)
			return fail("the stop before exec");
		if (ptrace(PTRACE_SETOPTIONS, child, NULL, (void *)PTRACE_O_TRACEEXEC) != 0 ||
		    ptrace(PTRACE_CONT, child, NULL, NULL) != 0)
			return fail("SETOPTIONS TRACEEXEC");
	}
	siginfo_t si;
	if (stop_info(child, SIGTRAP, &st, &si, "exec"))
		return 1;
	unsigned long msg = 0;
	if (event) {
		if (st >> 8 != (SIGTRAP | (PTRACE_EVENT_EXEC << 8)) || ptrace(PTRACE_GETEVENTMSG, child, NULL, &msg) != 0) {
			printf("FAIL: exec event: status %#x\n", st);
			return 1;
		}
		printf("exec event, former tid is the child: %d\n", msg == (unsigned long)child);
	} else {
		printf("exec SIGTRAP, si_code %d\n", si.si_code);
	}
	// The new image starts with argc at the top of its stack.
	struct user_regs_struct regs;
	if (ptrace(PTRACE_GETREGS, child, NULL, &regs) != 0)
		return fail("GETREGS at exec");
	errno = 0;
	long word = ptrace(PTRACE_PEEKDATA, child, (void *)regs.rsp, NULL);
	printf("argc of the new image: %ld\n", word);
	if (ptrace(PTRACE_CONT, child, NULL, NULL) != 0)
		return fail("CONT after exec");
	if (waitpid(child, &st, 0) != child)
		return fail("waitpid after exec");
	printf("exec'd child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return !WIFEXITED(st) || WEXITSTATUS(st) != 5 || word != 2;
}

// sibling: a child attaches to its sibling, reads its memory, continues it
// and collects its end with waitpid (the kernel reports a tracee's end to
// its tracer too); the parent then collects both.
static int sibling(void) {
	int up[2], go[2], st, tst;
	pid_t target, tracer;
	char c;
	if (two_pipes(up, go))
		return 1;
	if ((target = fork()) == 0) {
		prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY); // where Yama asks for it
		marker = 77;
		write(up[1], "r", 1);
		read(go[0], &c, 1);
		_exit(4);
	}
	if ((tracer = fork()) == 0) {
		if (read(up[0], &c, 1) != 1 || ptrace(PTRACE_ATTACH, target, NULL, NULL) != 0)
			_exit(10);
		if (waitpid(target, &st, 0) != target || !WIFSTOPPED(st) || WSTOPSIG(st) != SIGSTOP)
			_exit(11);
		long word = ptrace(PTRACE_PEEKDATA, target, &marker, NULL);
		if (ptrace(PTRACE_CONT, target, NULL, NULL) != 0)
			_exit(12);
		write(go[1], "g", 1);
		if (waitpid(target, &st, 0) != target)
			_exit(13);
		_exit(word == 77 && WIFEXITED(st) && WEXITSTATUS(st) == 4 ? 0 : 14);
	}
	if (waitpid(tracer, &tst, 0) != tracer || waitpid(target, &st, 0) != target)
		return fail("waitpid for the sibling tracer and its tracee");
	printf("the sibling tracer exited %d, its tracee %d\n", WIFEXITED(tst) ? WEXITSTATUS(tst) : -1,
	       WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return !WIFEXITED(tst) || WEXITSTATUS(tst) != 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 4;
}

static volatile sig_atomic_t fired;

static void on_alarm(int sig) { (void)sig; fired = 1; }

// interrupted_wait: the tracer waits for a tracee that does not stop until
// told; a timer's signal (no SA_RESTART) ends the wait with EINTR, or came
// before it (the flag says so: the outcome is the same either way).
static int interrupted_wait(void) {
	int go[2], st;
	pid_t child;
	if (pipe(go) != 0)
		return fail("pipe");
	if ((child = fork()) == 0) {
		char c;
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
			_exit(100 + errno);
		read(go[0], &c, 1);
		_exit(6);
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	ualarm(100000, 0);
	while (!fired) {
		pid_t r = waitpid(child, &st, 0);
		if (r == -1 && errno == EINTR)
			break;
		if (r != -1) {
			printf("FAIL: wait got %#x\n", st);
			return 1;
		}
	}
	printf("the timer ended the wait: %d\n", fired);
	write(go[1], "g", 1);
	if (waitpid(child, &st, 0) != child)
		return fail("waitpid after the timer");
	printf("the tracee exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return !fired || !WIFEXITED(st) || WEXITSTATUS(st) != 6;
}

// crash: the tracee faults; its tracer gets the SIGSEGV stop, reads the
// fault's siginfo and continues it with the signal, which kills it.
static int crash(void) {
	int st;
	pid_t child;
	if ((child = fork()) == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
			_exit(100 + errno);
		*(volatile int *)8 = 1;
		_exit(0);
	}
	siginfo_t si;
	if (stop_info(child, SIGSEGV, &st, &si, "fault"))
		return 1;
	printf("fault at %p\n", si.si_addr);
	if (ptrace(PTRACE_CONT, child, NULL, (void *)SIGSEGV) != 0)
		return fail("CONT with SIGSEGV");
	if (waitpid(child, &st, 0) != child)
		return fail("waitpid after the fault");
	printf("the tracee was killed by %s\n", WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "?");
	return !WIFSIGNALED(st) || WTERMSIG(st) != SIGSEGV || si.si_addr != (void *)8;
}

// syscall_stops: the tracer resumes its tracee with PTRACE_SYSCALL from
// its SIGSTOP to its end and checks each stop: entries and exits
// alternate on the same call, getppid's exit returns the tracer's pid, and
// the last stop is exit_group's entry.
static int syscall_stops(void) {
	int st, stops = 0, entering = 1;
	long nr = -1, last = -1;
	pid_t child;
	if ((child = fork()) == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
			_exit(100 + errno);
		raise(SIGSTOP);
		syscall(SYS_getppid);
		syscall(SYS_exit_group, 8);
	}
	if (waitpid(child, &st, 0) != child || !WIFSTOPPED(st) || WSTOPSIG(st) != SIGSTOP)
		return fail("the stop before the system calls");
	if (ptrace(PTRACE_SETOPTIONS, child, NULL, (void *)PTRACE_O_TRACESYSGOOD) != 0)
		return fail("SETOPTIONS TRACESYSGOOD");
	int ppid_ok = 0;
	for (;;) {
		if (ptrace(PTRACE_SYSCALL, child, NULL, NULL) != 0)
			return fail("PTRACE_SYSCALL");
		if (waitpid(child, &st, 0) != child)
			return fail("waitpid for a syscall stop");
		if (!WIFSTOPPED(st))
			break;
		if (WSTOPSIG(st) != (SIGTRAP | 0x80)) {
			printf("FAIL: syscall stop: status %#x\n", st);
			return 1;
		}
		struct user_regs_struct regs;
		if (ptrace(PTRACE_GETREGS, child, NULL, &regs) != 0)
			return fail("GETREGS at a syscall stop");
		stops++;
		if (entering) {
			nr = (long)regs.orig_rax;
		} else if ((long)regs.orig_rax != nr) {
			printf("FAIL: exit of %ld after the entry of %ld\n", (long)regs.orig_rax, nr);
			return 1;
		} else if (nr == SYS_getppid) {
			ppid_ok = (pid_t)regs.rax == getpid();
		}
		last = entering ? nr : -1;
		entering = !entering;
	}
	printf("syscall stops: %d, getppid answered %d, last entry exit_group %d, exited %d\n", stops, ppid_ok,
	       last == SYS_exit_group, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return !ppid_ok || last != SYS_exit_group || !WIFEXITED(st) || WEXITSTATUS(st) != 8;
}

int main(int argc, char **argv) {
	if (argc > 1 && strcmp(argv[1], "exec-child") == 0)
		return 5;
	setvbuf(stdout, NULL, _IONBF, 0);
	if (traceme() || attach() || traced_exec(0) || traced_exec(1) || sibling() || interrupted_wait() || crash() ||
	    syscall_stops())
		return 1;
	printf("OK\n");
	return 0;
}
