/* The exec helper: what rewind runs to start a program, stopped at its
   exec for the tracer (ptrace.Start). A program of its own, without libc,
   where re-executing rewind itself cost a start of its Go runtime and of
   every package's initialisation (~6 ms of each recording's ~30 ms fixed
   cost).

   argv: helper, "filter"|"nofilter", stack limit, ignored signals (-1:
   leave), path, the program's argv. fd 3: the sync pipe, which brings
   the filter (with "filter": a u16 count of BPF instructions, then them)
   and the program's environment (NUL-terminated strings) and closes; fd
   4: the ready pipe, where the helper writes one byte once it runs, for
   the tracer to seize it before it reads fd 3. fd 5: the helper's own
   image, closed at once.

   It sets the stack limit, turns ASLR off for the program, sets the
   signal dispositions, installs the filter and execs. Errors go to
   stderr as "rewind: ..." lines; exit status 124 says the filter could
   not be installed (ptrace.Start starts again without), 127 any other
   failure: what the Go helper it replaces did.

   argv: helper, "waker": the recorder's waker (waker.go), whose death
   is what wakes the tracer from wait4. It reads alarms from stdin (each
   a little-endian i64, the CLOCK_MONOTONIC time in nanoseconds when to
   exit, negative to cancel; the last one counts) and exits when the
   alarm's time comes or stdin closes. The time is absolute: a waker that
   starts late (it was just started, and an alarm was sent as it ran its
   exec) rings at the time asked, not that long after. */

typedef unsigned long u64;
typedef long i64;
typedef unsigned short u16;
typedef unsigned int u32;

static i64 sys6(i64 n, i64 a, i64 b, i64 c, i64 d, i64 e, i64 f) {
	register i64 r10 __asm__("r10") = d;
	register i64 r8 __asm__("r8") = e;
	register i64 r9 __asm__("r9") = f;
	i64 ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

#define sys3(n, a, b, c) sys6(n, (i64)(a), (i64)(b), (i64)(c), 0, 0, 0)

enum {
	SYS_read = 0, SYS_write = 1, SYS_close = 3, SYS_mmap = 9, SYS_rt_sigaction = 13,
	SYS_execve = 59, SYS_exit_group = 231, SYS_personality = 135, SYS_prctl = 157,
	SYS_prlimit64 = 302, SYS_seccomp = 317, SYS_clock_gettime = 228, SYS_ppoll = 271,
};

enum { NO_FILTER = 124, FAILED = 127 };

static u64 len(const char *s) {
	u64 n = 0;
	while (s[n])
		n++;
	return n;
}

static void say(const char *s) { sys3(SYS_write, 2, s, len(s)); }

/* sayNum writes n in decimal. */
static void sayNum(i64 n) {
	char b[24];
	int i = sizeof b;
	b[--i] = 0;
	int neg = n < 0;
	u64 v = neg ? -n : n;
	do {
		b[--i] = '0' + v % 10;
		v /= 10;
	} while (v);
	if (neg)
		b[--i] = '-';
	say(b + i);
}

/* errText names the errors an exec or a setup call commonly fails with,
   as strerror does (the Go helper printed them so). */
static const char *errText(i64 e) {
	switch (e) {
	case 1: return "operation not permitted";
	case 2: return "no such file or directory";
	case 7: return "argument list too long";
	case 8: return "exec format error";
	case 12: return "cannot allocate memory";
	case 13: return "permission denied";
	case 20: return "not a directory";
	case 21: return "is a directory";
	case 22: return "invalid argument";
	case 26: return "text file busy";
	case 36: return "file name too long";
	case 40: return "too many levels of symbolic links";
	}
	return 0;
}

static void fail(const char *what, const char *arg, i64 err, int status) {
	say("rewind: ");
	say(what);
	if (arg) {
		say(" ");
		say(arg);
	}
	say(": ");
	const char *t = errText(-err);
	if (t)
		say(t);
	else {
		say("errno ");
		sayNum(-err);
	}
	say("\n");
	sys3(SYS_exit_group, status, 0, 0);
	for (;;)
		;
}

/* num parses a decimal, maybe negative, argument. */
static int num(const char *s, i64 *out) {
	int neg = *s == '-';
	if (neg)
		s++;
	if (!*s)
		return 0;
	u64 v = 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return 0;
		v = v * 10 + (*s - '0');
	}
	*out = neg ? -(i64)v : (i64)v;
	return 1;
}

struct sockfprog {
	u16 len;
	char pad[6];
	const void *filter;
};

struct sigact {
	u64 handler, flags, restorer, mask;
};

struct rlimit {
	u64 cur, max;
};

struct timespec {
	i64 sec, nsec;
};

struct pollfd {
	int fd;
	short events, revents;
};

#define CLOCK_MONOTONIC 1
#define PR_SET_TIMERSLACK 29
#define POLLIN 1
#define EINTR 4
#define NS 1000000000L

static i64 now(void) {
	struct timespec t;
	sys3(SYS_clock_gettime, CLOCK_MONOTONIC, &t, 0);
	return t.sec * NS + t.nsec;
}

/* waker is the waker's body (see the top). */
static void waker(void) {
	i64 at = -1; /* when to exit, CLOCK_MONOTONIC; -1: never */
	/* Slices are tens of microseconds: the default timer slack (50 us)
	   would be a good part of one. */
	sys6(SYS_prctl, PR_SET_TIMERSLACK, 1, 0, 0, 0, 0);
	for (;;) {
		struct pollfd p = {0, POLLIN, 0};
		struct timespec ts, *tp = 0;
		if (at >= 0) {
			/* Zero: what was sent before the alarm's time counts. */
			i64 left = at - now();
			if (left < 0)
				left = 0;
			ts.sec = left / NS;
			ts.nsec = left % NS;
			tp = &ts;
		}
		i64 r = sys6(SYS_ppoll, (i64)&p, 1, (i64)tp, 0, 8, 0);
		if (r == -EINTR)
			continue;
		if (r <= 0)
			break;
		i64 msgs[8];
		r = sys3(SYS_read, 0, msgs, sizeof msgs);
		if (r == -EINTR)
			continue;
		if (r < 8)
			break;
		/* Writes of 8 bytes are atomic, reads whole ones. */
		at = msgs[r / 8 - 1];
	}
	sys3(SYS_exit_group, 0, 0, 0);
}

#define ADDR_NO_RANDOMIZE 0x0040000
#define PR_SET_NO_NEW_PRIVS 38
#define SECCOMP_SET_MODE_FILTER 1
#define RLIMIT_STACK 3
#define EACCES 13
/* Room for the filter and the environment: reserved, not committed. */
#define ROOM (1UL << 32)

__attribute__((used)) void helper_main(u64 *sp) {
	i64 argc = (i64)sp[0];
	char **argv = (char **)(sp + 1);
	sys3(SYS_close, 5, 0, 0);
	if (argc == 2 && argv[1][0] == 'w')
		waker();
	if (argc < 6) {
		say("rewind: exec helper: bad arguments\n");
		sys3(SYS_exit_group, FAILED, 0, 0);
	}
	int filter = argv[1][0] == 'f';
	i64 stack, ignored;
	if (!num(argv[2], &stack) || !num(argv[3], &ignored)) {
		say("rewind: exec helper: bad arguments\n");
		sys3(SYS_exit_group, FAILED, 0, 0);
	}
	char *path = argv[4], **args = argv + 5;

	sys3(SYS_write, 4, "R", 1);
	sys3(SYS_close, 4, 0, 0);
	char *buf = (char *)sys6(SYS_mmap, 0, ROOM, 3 /* PROT_READ|PROT_WRITE */,
				 0x4022 /* MAP_PRIVATE|MAP_ANONYMOUS|MAP_NORESERVE */, -1, 0);
	if ((u64)buf > -4096UL)
		fail("exec helper", "mmap", (i64)buf, FAILED);
	u64 n = 0;
	for (;;) {
		i64 r = sys3(SYS_read, 3, buf + n, ROOM / 2 - n);
		if (r == -EINTR)
			continue;
		if (r < 0)
			fail("exec helper", "read", r, FAILED);
		if (r == 0)
			break;
		n += r;
	}
	sys3(SYS_close, 3, 0, 0);

	char *p = buf, *end = buf + n;
	struct sockfprog prog = {0};
	if (filter) {
		if (end - p < 2)
			fail("exec helper", "filter", -22, FAILED);
		prog.len = *(u16 *)p;
		p += 2;
		if ((u64)(end - p) < (u64)prog.len * 8)
			fail("exec helper", "filter", -22, FAILED);
		prog.filter = p;
		p += (u64)prog.len * 8;
	}
	/* The environment: NUL-terminated strings, pointed to after them. */
	char **env = (char **)(buf + ((n + 7) & ~7UL));
	int ne = 0;
	while (p < end) {
		env[ne++] = p;
		p += len(p) + 1;
	}
	env[ne] = 0;

	if (stack != 0) {
		struct rlimit lim;
		if (sys6(SYS_prlimit64, 0, RLIMIT_STACK, 0, (i64)&lim, 0, 0) == 0) {
			lim.cur = stack;
			if (lim.max < (u64)stack)
				lim.max = stack;
			sys6(SYS_prlimit64, 0, RLIMIT_STACK, (i64)&lim, 0, 0, 0);
		}
	}
	i64 persona = sys3(SYS_personality, 0xffffffff, 0, 0);
	i64 r = sys3(SYS_personality, persona | ADDR_NO_RANDOMIZE, 0, 0);
	if (r < 0)
		fail("personality(ADDR_NO_RANDOMIZE)", 0, r, FAILED);
	if (ignored >= 0) {
		for (int sig = 1; sig <= 64; sig++) {
			if (sig == 9 || sig == 19)
				continue;
			struct sigact act = {((u64)ignored >> (sig - 1)) & 1, 0, 0, 0};
			sys6(SYS_rt_sigaction, sig, (i64)&act, 0, 8, 0, 0);
		}
	}
	if (filter) {
		r = sys3(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
		if (r == -EACCES) {
			r = sys6(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0);
			if (r < 0)
				fail("exec helper: no filter: prctl(PR_SET_NO_NEW_PRIVS)", 0, r, NO_FILTER);
			r = sys3(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
		}
		if (r < 0)
			fail("exec helper: no filter: seccomp(SECCOMP_SET_MODE_FILTER)", 0, r, NO_FILTER);
	}
	r = sys3(SYS_execve, path, args, env);
	fail("exec", path, r, FAILED);
}

__asm__(".globl _start\n"
	"_start:\n"
	"	mov %rsp, %rdi\n"
	"	and $-16, %rsp\n"
	"	call helper_main\n"
	"	hlt\n");
