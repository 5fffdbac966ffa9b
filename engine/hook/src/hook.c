/* The hook (engine/hook): system calls made inside the recorded program.
   Freestanding: no libc, no globals but the control page at a fixed
   address, no stack but the hook's own (the program's, red zone and all,
   is left alone, so that record and replay leave the same bytes there).

   In record mode a call the recorder lets the program make alone runs
   through the untraced syscall instruction and is appended to the buffer
   as a record (its number, arguments, result and the bytes it wrote);
   the recorder turns the records into events at the thread's next stop.
   Any other call, or one that would not fit, is made traced.

   Calls made traced are made from the program's stack, past its red
   zone, by hook_entry: a blocking call may take a signal.

   In replay mode, replay may put in the buffer the records of the calls
   the thread about to run made next; the hook answers a call from the
   next record when its number and arguments are the recorded ones
   (writing the bytes the call wrote), with no call, and makes any other
   call traced: replay answers it from its event, or reports that it
   differs from the recording. */
#include "layout.h"

typedef unsigned long u64;
typedef unsigned int u32;
typedef unsigned short u16;

/* What hook_entry pushed, lowest address first. */
struct frame {
	u64 r15, r14, r13, r12, rbp, rbx, r10, r9, r8, rdi, rsi, rdx, rcx, rflags;
};

/* A record: a header, then nin inputs (the paths the call read), then
   nout outputs (what it wrote), each a {addr, len} header and len bytes
   padded to 8. size covers it all. */
struct rec {
	u32 size;
	u16 nout, nin;
	u64 nr, args[6], ret, site;
};
struct out {
	u64 addr, len;
};

long do_syscall(long nr, const u64 *args, u64 insn);

/* traced has hook_entry go on to the stub's own syscall instruction,
   with the call's number, on the program's stack (entry.S): a call that
   blocks may take a signal, whose handler runs there and may come back
   into the hook. */
static long traced(u64 nr);

#define CTL(off, type) (*(volatile type *)(HOOK_CTL + (off)))

/* outputs says what call nr wrote when it returned ret: up to two
   ranges. It returns how many, or -1 for a call not to buffer. */
static int outputs(u64 nr, const u64 *a, long ret, struct out *o) {
	switch (nr) {
	case 39:  /* getpid */
	case 102: /* getuid */
	case 104: /* getgid */
	case 107: /* geteuid */
	case 108: /* getegid */
	case 110: /* getppid */
	case 186: /* gettid */
		return 0;
	case 0:  /* read */
	case 17: /* pread64 */
		if (ret <= 0)
			return 0;
		o[0].addr = a[1], o[0].len = ret;
		return 1;
	case 3: /* close */
	case 8: /* lseek */
		return 0;
	case 72: /* fcntl: F_DUPFD, F_GETFD, F_SETFD, F_GETFL, F_DUPFD_CLOEXEC */
		return a[1] <= 3 || a[1] == 1030 ? 0 : -1;
	case 217: /* getdents64: a directory never blocks */
		if (ret <= 0)
			return 0;
		o[0].addr = a[1], o[0].len = ret;
		return 1;
	case 228: /* clock_gettime */
		if (ret != 0 || a[1] == 0)
			return 0;
		o[0].addr = a[1], o[0].len = 16;
		return 1;
	case 5: /* fstat */
		if (ret != 0)
			return 0;
		o[0].addr = a[1], o[0].len = 144;
		return 1;
	case 262: /* newfstatat */
		if (ret != 0)
			return 0;
		o[0].addr = a[2], o[0].len = 144;
		return 1;
	case 332: /* statx */
		if (ret != 0)
			return 0;
		o[0].addr = a[4], o[0].len = 256;
		return 1;
	case 257: /* openat (see room) */
	case 21:  /* access */
	case 269: /* faccessat */
	case 439: /* faccessat2 */
		return 0;
	case 89:  /* readlink */
	case 267: /* readlinkat */
	case 318: /* getrandom: blocks only before the kernel's pool is ready */
		if (ret <= 0)
			return 0;
		o[0].addr = nr == 267 ? a[2] : nr == 89 ? a[1] : a[0], o[0].len = ret;
		return 1;
	case 79: /* getcwd */
		if (ret <= 0)
			return 0;
		o[0].addr = a[0], o[0].len = ret;
		return 1;
	case 63: /* uname */
		if (ret != 0)
			return 0;
		o[0].addr = a[0], o[0].len = 390;
		return 1;
	}
	return -1;
}

/* path says which argument of call nr is a path it reads, or -1. */
static int path(u64 nr) {
	switch (nr) {
	case 21: /* access */
	case 89: /* readlink */
		return 0;
	case 257: /* openat */
	case 262: /* newfstatat */
	case 267: /* readlinkat */
	case 269: /* faccessat */
	case 332: /* statx */
	case 439: /* faccessat2 */
		return 1;
	}
	return -1;
}

/* pathLen is the length of the path at p with its NUL, or 0 past
   PATH_MAX. Read only once the call has read it (it did not fail with
   EFAULT): a bad pointer must not fault in the hook. */
static u64 pathLen(const char *p) {
	for (u64 n = 0; n < 4096; n++)
		if (p[n] == 0)
			return n + 1;
	return 0;
}

/* openable says whether openat(a) opens what never blocks an open (a
   FIFO, a terminal or a device may): a regular file or a directory, or
   nothing (the call fails, or creates a regular file), asked with an
   untraced newfstatat. O_TRUNC changes a file the program may map, which
   the recorder looks at: made traced. */
static int openable(const u64 *a) {
	if (a[2] & 01000) /* O_TRUNC */
		return 0;
	u64 st[18];
	u64 b[6] = {a[0], a[1], (u64)st, 0, 0, 0};
	if (do_syscall(262, b, HOOK_UNTRACED) != 0)
		return 1;
	u32 fmt = ((u32 *)st)[6] & 0170000;
	return fmt == 0100000 || fmt == 0040000;
}

/* regular says whether fd is a regular file, which a read never waits
   on (a pipe, a socket or a terminal may): asked with an untraced fstat. */
static int regular(u64 fd) {
	u64 st[18];
	u64 b[6] = {fd, (u64)st, 0, 0, 0, 0};
	if (do_syscall(5, b, HOOK_UNTRACED) != 0)
		return 0;
	return (((u32 *)st)[6] & 0170000) == 0100000; /* st_mode, S_IFREG */
}

/* room says how many bytes the record of call nr with arguments a may
   take, or 0 for a call the hook does not record itself. */
static u64 room(u64 nr, const u64 *a) {
	struct out o[2];
	if (outputs(nr, a, -1, o) < 0)
		return 0;
	u64 n = sizeof(struct rec) + 2 * (sizeof(struct out) + 256) + sizeof(struct out) + 4096;
	switch (nr) {
	case 257:
		if (!openable(a))
			return 0;
		break;
	case 0:
	case 17:
		if (!regular(a[0]))
			return 0;
		/* fall through */
	case 217: /* up to the count */
	case 89:
	case 79:
		n += sizeof(struct out) + ((a[nr == 79 ? 1 : 2] + 7) & ~7UL);
		break;
	case 267:
		n += sizeof(struct out) + ((a[3] + 7) & ~7UL);
		break;
	case 318:
		n += sizeof(struct out) + ((a[1] + 7) & ~7UL);
		break;
	}
	return n;
}

static void copy(char *dst, const char *src, u64 n) {
	while (n--)
		*dst++ = *src++;
}

static long traced(u64 nr) {
	CTL(CTL_RET, u64) = CTL(CTL_STUB, u64) + STUB_TAIL;
	return nr;
}

/* replayed answers call nr from the next record replay gave, if it is
   that call: 1 with *ret set, else 0. */
static int replayed(u64 nr, const u64 *a, long *ret) {
	u64 pos = CTL(CTL_POS, u64), len = CTL(CTL_LEN, u64);
	if (pos >= len)
		return 0;
	struct rec *r = (struct rec *)(HOOK_BUF + pos);
	if (r->nr != nr)
		return 0;
	for (int i = 0; i < 6; i++)
		if (r->args[i] != a[i])
			return 0;
	const char *p = (const char *)(r + 1);
	for (u32 i = 0; i < r->nin; i++) {
		struct out o;
		copy((char *)&o, p, sizeof o);
		p += sizeof o;
		const char *m = (const char *)o.addr;
		for (u64 j = 0; j < o.len; j++)
			if (m[j] != p[j])
				return 0; /* another path: replay reports it */
		p += (o.len + 7) & ~7UL;
	}
	for (u32 i = 0; i < r->nout; i++) {
		struct out o;
		copy((char *)&o, p, sizeof o);
		p += sizeof o;
		copy((char *)o.addr, p, o.len);
		p += (o.len + 7) & ~7UL;
	}
	*ret = r->ret;
	CTL(CTL_POS, u64) = pos + r->size;
	return 1;
}

long hook_call(struct frame *f, u64 nr) {
	u64 a[6] = {f->rdi, f->rsi, f->rdx, f->r10, f->r8, f->r9};
	CTL(CTL_CALLS, u64)++;
	/* hook_entry goes on through the stub's way back (traced changes it):
	   jumping through memory leaves rcx and r11 as a syscall leaves them. */
	CTL(CTL_RET, u64) = CTL(CTL_STUB, u64) + STUB_RET;
	if (CTL(CTL_MODE, u32) != MODE_RECORD) {
		long ret;
		if (CTL(CTL_MODE, u32) == MODE_REPLAY && replayed(nr, a, &ret))
			return ret;
		return traced(nr);
	}
	/* Only in record mode: room may make calls of its own. */
	u64 len = CTL(CTL_LEN, u64), need = room(nr, a);
	if (need == 0 || need > HOOK_BUF_SIZE - len)
		return traced(nr);
	long ret = do_syscall(nr, a, HOOK_UNTRACED);
	struct rec *r = (struct rec *)(HOOK_BUF + len);
	struct out o[2];
	char *p = (char *)(r + 1);
	r->nin = 0;
	int pi = path(nr);
	if (pi >= 0 && ret != -14 /* EFAULT */) {
		struct out in = {a[pi], pathLen((const char *)a[pi])};
		if (in.len > 0) {
			copy(p, (const char *)&in, sizeof in);
			p += sizeof in;
			copy(p, (const char *)in.addr, in.len);
			p += (in.len + 7) & ~7UL;
			r->nin = 1;
		}
	}
	int n = outputs(nr, a, ret, o);
	for (int i = 0; i < n; i++) {
		copy(p, (const char *)&o[i], sizeof o[i]);
		p += sizeof o[i];
		copy(p, (const char *)o[i].addr, o[i].len);
		p += (o[i].len + 7) & ~7UL;
	}
	r->nout = n;
	r->nr = nr;
	for (int i = 0; i < 6; i++)
		r->args[i] = a[i];
	r->ret = ret;
	r->site = f->rcx;
	r->size = p - (char *)r;
	CTL(CTL_LEN, u64) = len + r->size; /* the commit */
	return ret;
}
