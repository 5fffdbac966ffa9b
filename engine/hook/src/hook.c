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
/* A u64 read at any address (the bytes a write wrote). */
typedef u64 __attribute__((may_alias, aligned(1))) unaligned64;

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
	u64 hash; /* of the bytes a write wrote (written), else 0 */
	u64 file; /* the file an mmap mapped: its entry in HOOK_FILES, from 1, or FILE_NEW */
	u64 std;  /* the standard stream a write went to (1, 2; its bytes kept), else 0 */
	u64 remake; /* replay's: 1 for a call to make again (see remade), or the
		       address of the path of the file an mmap made again maps; else 0 */
	u64 margs[6]; /* replay's: the arguments to make it with */
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

#define CTL(off, type) (*(volatile type *)(u64)(HOOK_CTL + (off)))

/* What patched trapping instructions call: apart, in .trap (hook.ld). */
#define TRAP __attribute__((section(".trap"), optimize("Os")))

/* outputs says what call nr wrote when it returned ret: up to two
   ranges. It returns how many, or -1 for a call not to buffer. Small
   rather than fast (the hook page's code has three pages): a switch
   either way. */
__attribute__((optimize("Os"))) static int outputs(u64 nr, const u64 *a, long ret, struct out *o) {
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
	case 7: /* poll: the revents of each */
		if (ret < 0)
			return 0;
		o[0].addr = a[0], o[0].len = a[1] * 8;
		return 1;
	case 232: /* epoll_wait: the events */
		if (ret <= 0)
			return 0;
		o[0].addr = a[1], o[0].len = ret * 12;
		return 1;
	case 45: /* recvfrom, with no address (see room) */
		if (a[4] != 0)
			return -1;
		if (ret <= 0)
			return 0;
		o[0].addr = a[1], o[0].len = ret;
		return 1;
	case 44: /* sendto, with no address (see room) */
		return a[4] != 0 ? -1 : 0;
	case 3: /* close */
	case 8: /* lseek */
		return 0;
	case 202: /* futex: a FUTEX_WAKE where no other thread shares the
		     memory (waits: one thread, nothing shared), which wakes
		     no one (pthread_once's, once a process) */
		return (a[1] & 0x7f) == 1 && (CTL(CTL_FLAGS, u32) & FLAG_WAIT) ? 0 : -1;
	case 72: /* fcntl: F_DUPFD, F_GETFD, F_SETFD, F_GETFL, F_DUPFD_CLOEXEC,
		    and the locks that do not wait: F_SETLK, F_OFD_SETLK, F_GETLK and
		    F_OFD_GETLK (a struct flock) */
		if (a[1] == 5 || a[1] == 36) {
			if (ret != 0)
				return 0;
			o[0].addr = a[2], o[0].len = 32;
			return 1;
		}
		return a[1] <= 3 || a[1] == 1030 || a[1] == 6 || a[1] == 37 ? 0 : -1;
	case 74: /* fsync */
	case 75: /* fdatasync */
	case 87: /* unlink */
	case 263: /* unlinkat */
	case 83: /* mkdir */
	case 258: /* mkdirat */
	case 84: /* rmdir */
	case 90: /* chmod */
	case 91: /* fchmod */
	case 268: /* fchmodat */
	case 93: /* fchown */
	case 260: /* fchownat */
		return 0; /* the file system's: replay leaves it as it is */
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
	case 96: { /* gettimeofday (a patched vDSO's: bash asks it for $RANDOM's seed) */
		int n = 0;
		if (ret != 0)
			return 0;
		if (a[0] != 0)
			o[n].addr = a[0], o[n++].len = 16;
		if (a[1] != 0)
			o[n].addr = a[1], o[n++].len = 8;
		return n;
	}
	case 201: /* time */
		if (ret < 0 || a[0] == 0)
			return 0;
		o[0].addr = a[0], o[0].len = 8;
		return 1;
	case 99: /* sysinfo */
		if (ret != 0)
			return 0;
		o[0].addr = a[0], o[0].len = 112;
		return 1;
	case 5: /* fstat */
	case 4: /* stat */
	case 6: /* lstat */
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
	case 22:  /* pipe */
	case 293: /* pipe2: the two descriptors */
		if (ret != 0)
			return 0;
		o[0].addr = a[0], o[0].len = 8;
		return 1;
	case 98: /* getrusage */
		if (ret != 0)
			return 0;
		o[0].addr = a[1], o[0].len = 144;
		return 1;
	case 221: /* fadvise64: advice, nothing written */
		return 0;
	case 302: /* prlimit64 that sets nothing */
		if (a[2] != 0)
			return -1;
		if (ret != 0 || a[3] == 0)
			return 0;
		o[0].addr = a[3], o[0].len = 16;
		return 1;
	case 158: /* arch_prctl: ARCH_SET_GS, ARCH_SET_FS */
		return a[0] == 0x1001 || a[0] == 0x1002 ? 0 : -1;
	case 218: /* set_tid_address */
	case 273: /* set_robust_list */
	case 334: /* rseq, which the recorder refuses: ENOSYS, with no call */
	case 59:  /* execve of nothing (see absent) */
	case 9:   /* mmap (see room) */
	case 10:  /* mprotect */
	case 11:  /* munmap */
	case 12:  /* brk */
	case 13:  /* rt_sigaction */
	case 14:  /* rt_sigprocmask */
		return 0;
	case 16: /* ioctl: TCGETS, TIOCGWINSZ (which isatty and the like ask),
		    TIOCGPGRP (a shell's, for job control) */
		if (a[1] != 0x5401 && a[1] != 0x5413 && a[1] != 0x540f)
			return -1;
		if (ret != 0)
			return 0;
		o[0].addr = a[2], o[0].len = a[1] == 0x5401 ? 36 : a[1] == 0x5413 ? 8 : 4;
		return 1;
	case 1:   /* write (see room) */
	case 18:  /* pwrite64 */
	case 20:  /* writev */
	case 32:  /* dup */
	case 33:  /* dup2 */
	case 292: /* dup3 */
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

/* input says which argument of call nr points to bytes it reads, which
   the record keeps (paths, the first bytes written), or -1. */
static int input(u64 nr) {
	switch (nr) {
	case 1:  /* write */
	case 18: /* pwrite64 */
	case 44: /* sendto */
		return 1;
	case 59: /* execve */
	case 21: /* access */
	case 89: /* readlink */
	case 4: /* stat */
	case 6: /* lstat */
	case 87: /* unlink */
	case 83: /* mkdir */
	case 84: /* rmdir */
	case 90: /* chmod */
		return 0;
	case 263: /* unlinkat */
	case 258: /* mkdirat */
	case 268: /* fchmodat */
	case 260: /* fchownat */
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

/* writes says whether call nr writes bytes from its second argument
   (write, pwrite64, sendto), whose first the record keeps and whose hash
   replay checks. */
static int writes(u64 nr) {
	return nr == 1 || nr == 18 || nr == 44;
}

/* inputLen is how many bytes of call nr's input at a[input(nr)] the
   record keeps: a path with its NUL, the first 32 bytes written (what
   `rewind events` shows; the hash checks them all), all of them for a
   write to a standard stream (std), which replay shows. */
static u64 inputLen(u64 nr, const u64 *a, long ret, int std) {
	if (writes(nr))
		return std || ret < 32 ? ret : 32;
	return pathLen((const char *)a[input(nr)]);
}

/* MAX_HASHED is how much of a write is hashed (trace.MaxEventMem). */
#define MAX_HASHED (1UL << 30)

/* crc32c continues the CRC-32C (Castagnoli) c of the n bytes at p with
   SSE4.2's crc32 instruction, 8 bytes at a time: rewind buffers calls only
   on a CPU that has it. It works on general registers: the hook touches
   no vector register. */
__attribute__((noinline)) static u32 crc32c(u32 c, const unsigned char *p, u64 n) {
	u64 c64 = c;
	for (; n >= 8; n -= 8, p += 8)
		__asm__("crc32q %1, %0" : "+r"(c64) : "m"(*(const unaligned64 *)p));
	c = (u32)c64;
	for (; n > 0; n--, p++)
		__asm__("crc32b %1, %0" : "+r"(c) : "m"(*p));
	return c;
}

/* written hashes the first n bytes call nr with arguments a wrote, as the
   recorder hashes a traced write (trace.WriteSum: CRC-32C, shifted left
   one bit with the low bit set, so that no hash is 0). */
__attribute__((noinline)) static u64 written(u64 nr, const u64 *a, u64 n) {
	u32 c = 0xffffffffU;
	if (n > MAX_HASHED)
		n = MAX_HASHED;
	if (nr != 20)
		c = crc32c(c, (const unsigned char *)a[1], n);
	else {
		const u64 *iov = (const u64 *)a[1];
		for (u64 i = 0; i < a[2] && n > 0; i++) {
			u64 l = iov[2 * i + 1] < n ? iov[2 * i + 1] : n;
			c = crc32c(c, (const unsigned char *)iov[2 * i], l);
			n -= l;
		}
	}
	return (u64)(c ^ 0xffffffffU) << 1 | 1;
}

/* Of a struct stat (u64 st[18]): the file type, and whether it is one of
   the memory devices, which never block (/dev/null, zero, full, random,
   urandom: major 1). */
#define ST_FMT(st) (((u32 *)(st))[6] & 0170000)
#define S_IFREG 0100000
#define S_IFDIR 0040000
#define S_IFCHR 0020000
static int memDevice(const u64 *st) {
	u64 rdev = st[5];
	return ST_FMT(st) == S_IFCHR && (rdev >> 8) == 1 && ((rdev & 0xff) == 3 || (rdev & 0xff) == 5 ||
		(rdev & 0xff) == 7 || (rdev & 0xff) == 8 || (rdev & 0xff) == 9);
}

/* onDevice says whether fd is a memory device (/dev/null...): what is
   written there is seen by no one, in whatever order (FLAG_STD_TRACED). */
static int onDevice(u64 fd) {
	u64 st[18];
	u64 b[6] = {fd, (u64)st, 0, 0, 0, 0};
	return do_syscall(5, b, HOOK_UNTRACED) == 0 && memDevice(st);
}

/* The process's shared mappings, as the recorder lists them: each
   {start, end, dev, ino}. */
#define SHARED(i, f) (((const u64 *)(HOOK_CTL + CTL_SHARED_MAPS))[4 * (i) + (f)])

/* sharedOverlap says whether [lo, hi) meets a shared mapping (or there are
   too many to tell): unmapping or replacing it changes what the recorder
   follows. */
static int sharedOverlap(u64 lo, u64 hi) {
	u64 n = CTL(CTL_NSHARED, u64);
	if (n > SHARED_MAX)
		return 1;
	for (u64 i = 0; i < n; i++)
		if (lo < SHARED(i, 1) && SHARED(i, 0) < hi)
			return 1;
	return 0;
}

/* sharedFile says whether the file of stat buffer st is mapped shared (or
   there are too many mappings to tell): writing or truncating it changes
   the mapping. */
static int sharedFile(const u64 *st) {
	u64 n = CTL(CTL_NSHARED, u64);
	if (n > SHARED_MAX)
		return 1;
	for (u64 i = 0; i < n; i++)
		if (st[0] == SHARED(i, 2) && st[1] == SHARED(i, 3))
			return 1;
	return 0;
}

/* openable says whether openat(a) opens what never blocks an open (a
   FIFO, a terminal or another device may): a regular file, a directory
   or a memory device, or nothing (the call fails, or creates a regular
   file), asked with an untraced newfstatat. O_TRUNC changes a file the
   program may map shared, which the recorder then looks at: traced. */
static int openable(const u64 *a) {
	if ((a[2] & 01000) && (CTL(CTL_FLAGS, u32) & FLAG_SHARED))
		return 0;
	u64 st[18];
	u64 b[6] = {a[0], a[1], (u64)st, 0, 0, 0};
	if (do_syscall(262, b, HOOK_UNTRACED) != 0)
		return 1;
	if ((a[2] & 01000) && sharedFile(st))
		return 0;
	return ST_FMT(st) == S_IFREG || ST_FMT(st) == S_IFDIR || memDevice(st);
}

/* regular says whether fd is a regular file, which a read never waits
   on (a pipe, a socket or a terminal may): asked with an untraced fstat. */
static int regular(u64 fd) {
	u64 st[18];
	u64 b[6] = {fd, (u64)st, 0, 0, 0, 0};
	if (do_syscall(5, b, HOOK_UNTRACED) != 0)
		return 0;
	return ST_FMT(st) == S_IFREG;
}

/* stdStream says which of the standard streams rewind passed (1 stdout,
   2 stderr) the file of stat buffer st, written through fd, is, or 0:
   replay shows what goes there, so the record of a write keeps its bytes.
   When the two are one file, fd 2 writes to stderr, any other to stdout
   (the recorder's matchStream). */
static int stdStream(const u64 *st, u64 fd) {
	int out = st[0] == CTL(CTL_STREAMS, u64) && st[1] == CTL(CTL_STREAMS + 8, u64);
	int err = st[0] == CTL(CTL_STREAMS + 16, u64) && st[1] == CTL(CTL_STREAMS + 24, u64);
	return fd == 2 && err ? 2 : out ? 1 : err ? 2 : 0;
}

/* writable says whether a write to fd is the hook's to record: to a
   regular file or a memory device, never blocking (*std says if it is a
   standard stream's), but not to procfs (/proc/PID/mem writes memory), nor
   to a file mapped shared, nor in a process that maps memory that may
   change under it. */
static int writable(u64 fd, int *std) {
	if (CTL(CTL_FLAGS, u32) & FLAG_SHARED)
		return 0;
	u64 st[18];
	u64 b[6] = {fd, (u64)st, 0, 0, 0, 0};
	if (do_syscall(5, b, HOOK_UNTRACED) != 0)
		return 0;
	if (ST_FMT(st) != S_IFREG && !memDevice(st))
		return 0;
	if (st[0] == CTL(CTL_PROC_DEV, u64) || sharedFile(st))
		return 0;
	*std = stdStream(st, fd);
	return 1;
}

/* Of a descriptor, for a call that may wait on it: a pipe or a FIFO, a
   socket, or neither (files never wait; terminals and other devices may,
   with no way to ask for a call that does not). */
#define S_IFIFO 0010000
#define S_IFSOCK 0140000
enum { STREAM_NONE, STREAM_PIPE, STREAM_SOCKET };

/* stream says which of those fd is, asked with an untraced fstat (*std:
   which standard stream rewind passed, if one), not in a process that maps
   memory that may change under it. */
static int stream(u64 fd, int *std) {
	if (CTL(CTL_FLAGS, u32) & FLAG_SHARED)
		return STREAM_NONE;
	u64 st[18];
	u64 b[6] = {fd, (u64)st, 0, 0, 0, 0};
	if (do_syscall(5, b, HOOK_UNTRACED) != 0)
		return STREAM_NONE;
	*std = stdStream(st, fd);
	return ST_FMT(st) == S_IFIFO ? STREAM_PIPE : ST_FMT(st) == S_IFSOCK ? STREAM_SOCKET : STREAM_NONE;
}

/* PIPE_BUF: a write to a pipe of at most that many bytes is all or none;
   SMALL_SEND: a send of at most that many to a socket that polls
   writable has the room (it cannot end short, as a write that would
   block natively waits for all). */
#define PIPE_BUF 4096
#define SMALL_SEND 512

/* sendable says whether socket fd polls writable now (untraced poll). */
static int sendable(u64 fd) {
	struct {
		int fd;
		short events, revents;
	} p = {(int)fd, 4 /* POLLOUT */, 0};
	u64 b[6] = {(u64)&p, 1, 0, 0, 0, 0};
	return do_syscall(7, b, HOOK_UNTRACED) == 1 && (p.revents & 4);
}

/* waits says whether the process may wait in the hook (FLAG_WAIT): a
   write there may be of any size, made as it comes (hook_call). */
static int waits(void) { return (CTL(CTL_FLAGS, u32) & FLAG_WAIT) != 0; }

/* nowait says whether call nr with arguments a, which may wait on a pipe
   or a socket, is to be tried without waiting (probe): a read or a
   receive always (it may return less natively too), a write or a send
   when it cannot end short; *std says whether the descriptor is one of
   the standard streams rewind passed. */
static int nowait(u64 nr, const u64 *a, int *std) {
	switch (nr) {
	case 0:
		return stream(a[0], std) != STREAM_NONE;
	case 45: /* not MSG_WAITALL, which would return short not waiting */
		return a[4] == 0 && !(a[3] & 0x100) && stream(a[0], std) == STREAM_SOCKET;
	case 1:
		/* Not to a standard stream: another thread's write there may be
		   in the kernel, waiting for room, which the recorder orders the
		   others after (a pipe's large writes interleave). */
		switch (stream(a[0], std) * !*std) {
		case STREAM_PIPE:
			return a[2] <= PIPE_BUF || waits();
		case STREAM_SOCKET:
			return waits() || (a[2] <= SMALL_SEND && sendable(a[0]));
		}
		return 0;
	case 44:
		return a[4] == 0 && stream(a[0], std) == STREAM_SOCKET && (waits() || (a[2] <= SMALL_SEND && sendable(a[0])));
	}
	return 0;
}

/* POLL_MAX: the most descriptors a poll, or events an epoll_wait, the
   hook makes. */
#define POLL_MAX 64

/* STD_MAX: the most bytes of a write to a standard stream a record keeps
   (larger ones are made traced, the recorder keeping their bytes). */
#define STD_MAX 65536

/* probe makes call nr (read, write, recvfrom, sendto) so that it does not
   wait: RWF_NOWAIT (preadv2, pwritev2 at the file position), or
   MSG_DONTWAIT. -EAGAIN where it would have waited. */
static long probe(u64 nr, const u64 *a) {
	u64 iov[2] = {a[1], a[2]};
	u64 b[6] = {a[0], (u64)iov, 1, (u64)-1, (u64)-1, 8 /* RWF_NOWAIT */};
	switch (nr) {
	case 0:
		return do_syscall(327 /* preadv2 */, b, HOOK_UNTRACED);
	case 1:
		return do_syscall(328 /* pwritev2 */, b, HOOK_UNTRACED);
	}
	u64 c[6] = {a[0], a[1], a[2], a[3] | 0x40 /* MSG_DONTWAIT */, 0, 0};
	return do_syscall(nr, c, HOOK_UNTRACED);
}

/* blocks says whether a call on fd that found nothing to do (EAGAIN)
   would have waited: fd is not non-blocking (untraced fcntl). */
static int blocks(u64 fd) {
	u64 b[6] = {fd, 3 /* F_GETFL */, 0, 0, 0, 0};
	long fl = do_syscall(72, b, HOOK_UNTRACED);
	return fl < 0 || !(fl & 04000 /* O_NONBLOCK */);
}

/* copy moves n bytes: eight at a time where few (the records' {addr,
   len} headers), else with the CPU's string move, which moves a cache
   line or so a cycle where a loop of bytes, all that the compiler makes
   without vector registers, moved one (a read's megabytes, each
   directory listing find reads, in record and replay alike). */
static void copy(char *dst, const char *src, u64 n) {
	if (n <= 32) {
		for (; n >= 8; n -= 8, dst += 8, src += 8)
			*(unaligned64 *)dst = *(const unaligned64 *)src;
		while (n--)
			*dst++ = *src++;
		return;
	}
	__asm__ volatile("cld; rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory", "cc");
}

/* A file an mmap maps that the recorder has not stored, small enough to
   travel in the record: the hook reads it whole, and the record's two
   inputs are a struct newfile with the file's path (its NUL included),
   then its bytes. The recorder stores it as it stores a file it looked at
   itself, with no stop. */
struct newfile {
	u64 dev, ino, size, mtime, ctime; /* what fstat said, times in ns */
};

/* stored says which entry of the table of the files the recorder stored
   fd is, from 1, or 0: the recorder needs no look at a mapping of one.
   Of another regular file *nf is what fstat says. */
/* Small rather than fast: once per mapping of a file. */
__attribute__((optimize("Os"))) static u64 stored(u64 fd, struct newfile *nf) {
	u64 st[18];
	u64 b[6] = {fd, (u64)st, 0, 0, 0, 0};
	nf->size = 0;
	if (do_syscall(5, b, HOOK_UNTRACED) != 0 || ST_FMT(st) != S_IFREG)
		return 0;
	u64 mtime = st[11] * 1000000000UL + st[12]; /* st_mtim */
	u64 n = CTL(CTL_NFILES, u64);
	const volatile u64 *f = (const volatile u64 *)(u64)HOOK_FILES;
	for (u64 i = 0; i < n && i < HOOK_FILES_MAX; i++, f += 4)
		if (f[0] == st[0] && f[1] == st[1] && f[2] == st[6] && f[3] == mtime)
			return i + 1;
	nf->dev = st[0], nf->ino = st[1], nf->size = st[6], nf->mtime = mtime;
	nf->ctime = st[13] * 1000000000UL + st[14]; /* st_ctim */
	return 0;
}

/* mappable says whether mmap(a) is the hook's to record: private memory
   that is not executable (the recorder patches new code before it runs),
   anonymous or of a file the recorder stored (*file), or of a small one
   it has not (*file FILE_NEW, *nf what fstat says: one that procfs or
   sysfs says is empty may not be), replacing nothing shared (the recorder
   follows what a MAP_FIXED mapping replaces in a process that maps memory
   shared) and, for a new file, nothing at all (the hook undoes the
   mapping when the file changes under it). */
static int mappable(const u64 *a, u64 *file, struct newfile *nf) {
	if ((a[2] & 4) || (a[3] & 0xf) != 2 ||
	    ((a[3] & 0x10) && ((CTL(CTL_FLAGS, u32) & FLAG_SHARED) || sharedOverlap(a[0], (a[0] + a[1] + 4095) & ~4095UL))))
		return 0;
	if (a[3] & 0x20) /* MAP_ANONYMOUS */
		return 1;
	*file = stored(a[4], nf);
	if (*file == 0 && nf->size > 0 && nf->size <= NEWFILE_MAX && !(a[3] & 0x10) && nf->dev != CTL(CTL_PROC_DEV, u64))
		*file = FILE_NEW;
	return *file != 0;
}

/* fdPath writes "/proc/self/fd/<fd>" into p. */
static void fdPath(char *p, u64 fd) {
	const char *pre = "/proc/self/fd/";
	while (*pre)
		*p++ = *pre++;
	char d[20];
	int n = 0;
	do
		d[n++] = '0' + fd % 10;
	while ((fd /= 10) != 0);
	while (n > 0)
		*p++ = d[--n];
	*p = 0;
}

/* readNew writes at p the two inputs of an mmap of new file fd (struct
   newfile): *nf with the file's path, and its bytes, mapped at addr. It
   returns the end of what it wrote, or 0 when the file changed since nf
   was asked, or its path or bytes cannot be read (the hook then undoes the
   mapping and makes the call traced). */
static char *readNew(u64 fd, const struct newfile *nf, u64 addr, char *p) {
	struct out o = {0, 0};
	char *head = p, *path = p + sizeof o + sizeof *nf;
	char proc[40];
	fdPath(proc, fd);
	u64 b[6] = {(u64)proc, (u64)path, NEWFILE_PATH - 1, 0, 0, 0};
	long n = do_syscall(89 /* readlink */, b, HOOK_UNTRACED);
	if (n <= 0 || n >= NEWFILE_PATH - 1 || path[0] != '/')
		return 0;
	path[n] = 0;
	o.len = sizeof *nf + n + 1;
	copy(head, (const char *)&o, sizeof o);
	copy(head + sizeof o, (const char *)nf, sizeof *nf);
	p = head + sizeof o + ((o.len + 7) & ~7UL);
	struct out d = {addr, nf->size};
	copy(p, (const char *)&d, sizeof d);
	p += sizeof d;
	u64 r[6] = {fd, (u64)p, nf->size, 0, 0, 0};
	if ((u64)do_syscall(17 /* pread64 */, r, HOOK_UNTRACED) != nf->size)
		return 0;
	p += (nf->size + 7) & ~7UL;
	struct newfile now;
	if (stored(fd, &now) != 0 || now.size != nf->size || now.mtime != nf->mtime || now.ctime != nf->ctime ||
	    now.dev != nf->dev || now.ino != nf->ino)
		return 0;
	return p;
}

/* absent says why execve(a) fails when its path names nothing, as a
   shell's search of PATH meets at most tries (-ENOENT, -ENOTDIR, from an
   untraced newfstatat), or 0: the hook answers those without the call,
   and leaves any other to the recorder. */
static long absent(const u64 *a) {
	u64 st[18];
	u64 b[6] = {(u64)-100 /* AT_FDCWD */, a[0], (u64)st, 0, 0, 0};
	long r = do_syscall(262, b, HOOK_UNTRACED);
	return r == -2 || r == -20 ? r : 0;
}

/* maskable says whether rt_sigprocmask(a) is the hook's to record: one
   that unblocks no pending signal (the kernel would deliver it inside the
   hook, and the recorder only later), asked with an untraced
   rt_sigpending rather than read from a set the call has not checked. */
static int maskable(const u64 *a) {
	if (a[0] == 0 /* SIG_BLOCK */ || a[1] == 0)
		return 1;
	u64 pending = 0;
	u64 b[6] = {(u64)&pending, 8, 0, 0, 0, 0};
	return do_syscall(127, b, HOOK_UNTRACED) == 0 && pending == 0;
}

/* room says how many bytes the record of call nr with arguments a may
   take, or 0 for a call the hook does not record itself; *file is the
   stored file an mmap maps (*nf a new one's identity), *probing whether the call may wait on a pipe
   or a socket and is to be made so that it does not (probe), *std the
   standard stream a write goes to. */
static u64 room(u64 nr, const u64 *a, u64 *file, struct newfile *nf, int *probing, int *std) {
	struct out o[2];
	if (outputs(nr, a, -1, o) < 0)
		return 0;
	u64 n = sizeof(struct rec) + 2 * (sizeof(struct out) + 256) + sizeof(struct out) + 4096;
	switch (nr) {
	case 257:
		if (!openable(a))
			return 0;
		break;
	case 9:
		if (!mappable(a, file, nf))
			return 0;
		if (*file == FILE_NEW)
			n += 2 * sizeof(struct out) + sizeof *nf + NEWFILE_PATH + ((nf->size + 7) & ~7UL);
		break;
	case 10: /* mprotect: not making code */
		if (a[2] & 4)
			return 0;
		break;
	case 11:
		if ((CTL(CTL_FLAGS, u32) & FLAG_SHARED) || sharedOverlap(a[0], (a[0] + a[1] + 4095) & ~4095UL))
			return 0;
		break;
	case 14:
		if (!maskable(a))
			return 0;
		break;
	case 59:
		if (!absent(a))
			return 0;
		break;
	case 1:
	case 18:
		if (!writable(a[0], std) && !(nr == 1 && (*probing = nowait(nr, a, std))))
			return 0;
		if (*std && (a[2] > STD_MAX || ((CTL(CTL_FLAGS, u32) & FLAG_STD_TRACED) && !onDevice(a[0]))))
			return 0;
		n += sizeof(struct out) + (*std ? (a[2] + 7) & ~7UL : 32);
		break;
	case 7:
	case 232:
		/* Of few descriptors, and waiting only where the process may
		   wait in the hook (FLAG_WAIT); never where memory it shares may
		   change meanwhile, which the recorder compares after a wait. */
		if ((CTL(CTL_FLAGS, u32) & FLAG_SHARED) || a[nr == 7 ? 1 : 2] - 1 >= POLL_MAX ||
			((int)a[nr == 7 ? 2 : 3] != 0 && !(CTL(CTL_FLAGS, u32) & FLAG_WAIT)))
			return 0;
		n += sizeof(struct out) + a[nr == 7 ? 1 : 2] * (nr == 7 ? 8 : 12);
		break;
	case 44: /* (to a standard stream: traced, the recorder keeps the bytes) */
		if (!(*probing = nowait(nr, a, std)) || *std)
			return 0;
		n += sizeof(struct out) + 32;
		break;
	case 20: /* (to a standard stream: traced, the recorder keeps the bytes) */
		if (!writable(a[0], std) || *std)
			return 0;
		break;
	case 0:
	case 17:
	case 45:
		if (nr == 45 || !regular(a[0])) {
			if (nr == 17 || !(*probing = nowait(nr, a, std)))
				return 0;
		}
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

static long traced(u64 nr) {
	CTL(CTL_RET, u64) = CTL(CTL_STUB, u64) + STUB_TAIL;
	return nr;
}

/* remade makes call nr of record r again, untraced, with the arguments
   replay chose (an mmap where it mapped, of the trace's copy of its
   file: open in the process, or, when r->remake is not 1, opened here
   from the path it points to, the file replay holds, and closed after).
   It returns 1 with *ret the recorded result, or records in CTL_MISS_NR
   and CTL_MISS_RET a result that differs from the recording (for replay
   to report: the call is then made traced) and returns 0. */
static int remade(u64 nr, const struct rec *r, long *ret) {
	u64 a[6];
	for (int i = 0; i < 6; i++)
		a[i] = r->margs[i];
	long fd = -1, want = r->ret, got;
	if (r->remake != 1) {
		u64 o[6] = {(u64)-100 /* AT_FDCWD */, r->remake, 02000000 /* O_RDONLY|O_CLOEXEC */, 0, 0, 0};
		got = fd = do_syscall(257 /* openat */, o, HOOK_UNTRACED);
		if (fd >= 0) {
			a[4] = fd;
			got = do_syscall(nr, a, HOOK_UNTRACED);
			u64 c[6] = {fd, 0, 0, 0, 0, 0};
			do_syscall(3 /* close */, c, HOOK_UNTRACED);
		}
	} else
		got = do_syscall(nr, a, HOOK_UNTRACED);
	if (got != want && nr != 218) { /* set_tid_address: the tid, which differs */
		CTL(CTL_MISS_NR, u64) = nr;
		CTL(CTL_MISS_RET, u64) = got;
		return 0;
	}
	*ret = want;
	return 1;
}

/* replayed answers call nr from the next record replay gave, if it is
   that call: 1 with *ret set, else 0. A record replay marks remake is a
   call whose effect is the kernel's (the memory calls, the signal
   dispositions and mask, the thread's registers and addresses the kernel
   keeps: hook.ReplayTraced), made again. */
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
	if (r->hash != 0 && written(nr, a, r->ret) != r->hash)
		return 0; /* other bytes written */
	if (r->remake && !remade(nr, r, ret))
		return 0;
	for (u32 i = 0; i < r->nout; i++) {
		struct out o;
		copy((char *)&o, p, sizeof o);
		p += sizeof o;
		copy((char *)o.addr, p, o.len);
		p += (o.len + 7) & ~7UL;
	}
	if (!r->remake)
		*ret = r->ret;
	CTL(CTL_POS, u64) = pos + r->size;
	return 1;
}

/* What hook_trap_entry pushed, lowest address first, and the return
   address into the stub. */
struct trapframe {
	u64 r11, r10, r9, r8, rdi, rsi, rbx, rdx, rcx, rax, rflags, ret;
};

/* trapCpuid answers cpuid(f's eax, ecx) from the table the recorder wrote
   into the page (the same in replay, from the trace): 1 with f's eax, ebx,
   ecx and edx set, or 0 when the table has no answer. */
TRAP static int trapCpuid(struct trapframe *f) {
	u32 leaf = f->rax, sub = f->rcx;
	u64 n = CTL(CTL_NCPUID, u64);
	const volatile u32 *e = (const volatile u32 *)(u64)HOOK_CPUID_TABLE;
	for (u64 i = 0; i < n && i < HOOK_CPUID_MAX; i++, e += 8)
		if (e[0] == leaf && (e[2] != 0 || e[1] == sub)) {
			f->rax = e[4], f->rbx = e[5], f->rcx = e[6], f->rdx = e[7];
			return 1;
		}
	return 0;
}

/* trapRdtsc answers an rdtsc at site: in record mode the time-stamp
   counter, read with rdtsc allowed for an instant (rewind keeps it
   trapping) and recorded (NR_RDTSC, the site's address its argument); in
   replay mode the next record's value, when it is that site's. 1 with f's
   eax and edx set, or 0. */
TRAP static int trapRdtsc(struct trapframe *f, u64 site) {
	u64 len = CTL(CTL_LEN, u64), v;
	struct rec *r = (struct rec *)(HOOK_BUF + len);
	if (CTL(CTL_MODE, u32) == MODE_REPLAY) {
		u64 pos = CTL(CTL_POS, u64);
		r = (struct rec *)(HOOK_BUF + pos);
		if (pos >= len || r->nr != NR_RDTSC || r->args[0] != site)
			return 0;
		v = r->ret;
		CTL(CTL_POS, u64) = pos + r->size;
	} else {
		if (CTL(CTL_MODE, u32) != MODE_RECORD || (CTL(CTL_FLAGS, u32) & FLAG_TSC_TRAP) ||
			sizeof(struct rec) > HOOK_BUF_SIZE - len)
			return 0;
		u64 a[6] = {26 /* PR_SET_TSC */, 1 /* PR_TSC_ENABLE */, 0, 0, 0, 0};
		if (do_syscall(157 /* prctl */, a, HOOK_UNTRACED) != 0)
			return 0;
		u32 lo, hi;
		__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
		a[1] = 2; /* PR_TSC_SIGSEGV */
		do_syscall(157, a, HOOK_UNTRACED);
		v = (u64)hi << 32 | lo;
		r->nr = NR_RDTSC;
		r->args[0] = site;
		for (int i = 1; i < 6; i++)
			r->args[i] = 0;
		r->ret = v;
		r->site = site;
		r->nin = r->nout = 0;
		r->hash = r->file = r->std = r->remake = 0;
		for (int i = 0; i < 6; i++)
			r->margs[i] = 0;
		r->size = sizeof(struct rec);
		CTL(CTL_LEN, u64) = len + r->size; /* the commit */
	}
	f->rax = (u32)v, f->rdx = v >> 32;
	return 1;
}

/* trapXgetbv answers xgetbv(0) at a patched site (the window sets ecx to 0
   just before it) from the control page, where the recorder wrote it (the
   same in replay, from the trace): 1 with f's eax and edx set, or 0. */
TRAP static int trapXgetbv(struct trapframe *f) {
	u64 v = CTL(CTL_XCR0, u64);
	if ((u32)f->rcx != 0 || v == 0)
		return 0;
	f->rax = (u32)v, f->rdx = v >> 32;
	return 1;
}

/* hook_trap answers the patched instruction whose stub called
   hook_trap_entry, which the stub's header says (trap.go: its magic, its
   window's start and the instruction's offset in it): 1 with its
   registers set in f, or 0. */
TRAP int hook_trap(struct trapframe *f) {
	u64 slot = (f->ret & ~0xfffUL) + (f->ret & 0xfff) / STUB_LEN * STUB_LEN;
	const unsigned char *h = (const unsigned char *)slot;
	if (h[2] != 'R' || h[3] != 'W')
		return 0;
	if (h[4] == 'C' && h[5] == 'P')
		return trapCpuid(f);
	if (h[4] == 'T' && h[5] == 'S')
		return trapRdtsc(f, *(const u64 *)(h + 6) + h[15]);
	if (h[4] == 'X' && h[5] == 'G')
		return trapXgetbv(f);
	return 0;
}

long hook_call(struct frame *f, u64 nr) {
	u64 a[6] = {f->rdi, f->rsi, f->rdx, f->r10, f->r8, f->r9};
	CTL(CTL_CALLS, u64)++;
	/* hook_entry goes on through the stub's way back (traced changes it):
	   jumping through memory leaves rcx and r11 as a syscall leaves them. */
	CTL(CTL_RET, u64) = CTL(CTL_STUB, u64) + STUB_RET;
	if (CTL(CTL_MODE, u32) != MODE_RECORD) {
		long ret = 0;
		if (CTL(CTL_MODE, u32) == MODE_REPLAY && replayed(nr, a, &ret))
			return ret;
		return traced(nr);
	}
	/* Only in record mode: room may make calls of its own. */
	u64 file = 0;
	struct newfile nf;
	int probing = 0, std = 0;
	u64 len = CTL(CTL_LEN, u64), need = room(nr, a, &file, &nf, &probing, &std);
	if (need == 0 || need > HOOK_BUF_SIZE - len)
		return traced(nr);
	long ret;
	if ((probing && (nr == 0 || nr == 45 || nr == 1 || nr == 44) && waits()) ||
		(nr == 7 && (int)a[2] != 0) || (nr == 232 && (int)a[3] != 0)) {
		/* Alone on its run queue: a read, a write, a poll may wait
		   here (a write a signal cuts short returns what it wrote). */
		CTL(CTL_WAITING, u64) = 1;
		ret = do_syscall(nr, a, HOOK_UNTRACED);
		CTL(CTL_WAITING, u64) = 0;
		/* A write to a pipe or socket no one reads (EPIPE, nothing
		   written) raised a SIGPIPE, which kills before the call returns:
		   made again traced, where the recorder delivers it. */
		if (ret == -RETRACE || (ret == -32 /* EPIPE */ && (nr == 1 || nr == 44)))
			return traced(nr);
	} else if (probing) {
		/* Made so that it cannot wait: one that would have waited, or
		   failed otherwise, is made traced, for the recorder to let
		   others run meanwhile. */
		ret = probe(nr, a);
		if (ret < 0 && (ret != -11 /* EAGAIN */ || blocks(a[0])))
			return traced(nr);
	} else
		ret = nr == 59 ? absent(a) : nr == 334 ? -38 /* ENOSYS */ : do_syscall(nr, a, HOOK_UNTRACED);
	struct rec *r = (struct rec *)(HOOK_BUF + len);
	struct out o[2];
	char *p = (char *)(r + 1);
	r->nin = 0;
	if (file == FILE_NEW && (u64)ret >= -4095UL)
		file = 0; /* it mapped nothing */
	if (file == FILE_NEW) {
		char *end = readNew(a[4], &nf, ret, p);
		if (end == 0) {
			u64 u[6] = {ret, a[1], 0, 0, 0, 0};
			do_syscall(11 /* munmap */, u, HOOK_UNTRACED);
			return traced(nr);
		}
		p = end;
		r->nin = 2;
	}
	int pi = input(nr);
	if (pi >= 0 && (writes(nr) ? ret > 0 : ret != -14 /* EFAULT */)) {
		struct out in = {a[pi], inputLen(nr, a, ret, std && writes(nr))};
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
	r->hash = (writes(nr) || nr == 20) && ret > 0 ? written(nr, a, ret) : 0;
	r->file = file;
	r->std = writes(nr) && ret > 0 ? std : 0;
	r->remake = 0;
	for (int i = 0; i < 6; i++)
		r->margs[i] = 0;
	r->size = p - (char *)r;
	CTL(CTL_LEN, u64) = len + r->size; /* the commit */
	return ret;
}
