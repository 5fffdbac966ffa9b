/* Fixed addresses of the hook page (engine/hook): shared by its code and
   the Go constants in layout.go, which a test checks against this file. */
#define HOOK_BASE 0x70000000     /* code: the two syscall instructions first */
#define HOOK_UNTRACED 0x70000000 /* syscall; ret — the filter lets it through */
#define HOOK_TRACED 0x70000003   /* syscall; ret — where buffered calls say they were made */
#define HOOK_REEXEC 0x70000008  /* syscall; int3 — replay runs a call here, let through, to a stop after it */
#define HOOK_ENTRY 0x70000010    /* where a patched site's stub jumps */
#define HOOK_TRAP_CODE 0x70002d00   /* the code patched cpuid and rdtsc sites call, to the control page */
#define HOOK_TRAP_ENTRY 0x70002d00  /* where a patched cpuid's or rdtsc's stub calls (hook_trap_entry) */
#define HOOK_CTL 0x70003000      /* control page */
#define HOOK_TRAP_STACK_TOP 0x70004000 /* patched cpuid's and rdtsc's, in the control page's upper part */
#define HOOK_STACK_TOP 0x70005000
#define HOOK_BUF 0x70005000
#define HOOK_BUF_SIZE 0x100000
#define HOOK_FILES 0x70105000 /* the files the recorder stored: HOOK_FILES_MAX x {dev, ino, size, mtime ns} */
#define HOOK_FILES_MAX 4096
#define HOOK_CPUID_TABLE 0x70125000 /* cpuid's answers: HOOK_CPUID_MAX x {leaf, sub, any sub, 0, eax, ebx, ecx, edx} (u32) */
#define HOOK_CPUID_MAX 256
#define HOOK_SIZE 0x127000 /* the whole mapping */

/* Control page fields (offsets). */
#define CTL_MODE 0      /* u32: 0 every call traced, 1 record, 2 replay */
#define CTL_FLAGS 4     /* u32: FLAG_* (record mode) */
#define CTL_LEN 8       /* u64: bytes of committed records */
#define CTL_USER_RSP 16 /* u64: the program's rsp during a call */
#define CTL_CALLS 24    /* u64: calls made through the hook */
#define CTL_POS 32      /* u64: replay: bytes of records consumed */
#define CTL_STUB 40     /* u64: the stub the call came through */
#define CTL_RET 48      /* u64: where hook_entry goes on (in the stub) */
#define CTL_STREAMS 56  /* 2 x {u64 dev, ino}: the files of the stdout and stderr rewind passed */
#define CTL_PROC_DEV 88 /* u64: procfs's device: its files are written traced */
#define CTL_NFILES 96   /* u64: entries of HOOK_FILES in use */
#define CTL_NCPUID 104  /* u64: entries of HOOK_CPUID_TABLE in use */
#define CTL_TRAP_RSP 112 /* u64: the program's rsp while a trap stub runs on the trap stack */
#define CTL_NSHARED 120 /* u64: entries of CTL_SHARED_MAPS in use; past SHARED_MAX, too many to list */
#define CTL_SHARED_MAPS 128 /* SHARED_MAX x {start, end, dev, ino}: the process's shared mappings */
#define SHARED_MAX 16
#define CTL_MISS_NR 640  /* u64: replay: a call the hook made again whose result differs, or 0 */
#define CTL_MISS_RET 648 /* u64: that result */
#define CTL_WAITING 656  /* u64: 1 while the hook waits in a read (FLAG_WAIT) */
#define CTL_XCR0 664     /* u64: xgetbv(0)'s answer at patched xgetbv sites; 0 (never XCR0: x87 is always on) when none */

/* Offsets in a stub (stub.go): the way back to the site, and the
   syscall instruction that makes a call traced. */
#define STUB_RET 61
#define STUB_TAIL 72
#define STUB_LEN 96
/* How far past its return address hook_trap_entry returns when it has no
   answer: a trap stub's way on after an answer
   (trap.go), to its own instruction, which traps. */
#define TRAP_MISS_SKIP 10
/* The number of the hook's record of an rdtsc (its first argument: the
   patched rdtsc's address). */
#define NR_RDTSC 0xfffffffe
/* A record's file for an mmap of a file the recorder has not stored (the
   record carries it: hook.c's struct newfile), of at most NEWFILE_MAX
   bytes and a path of fewer than NEWFILE_PATH. */
#define FILE_NEW 0xffffffffffffffffUL
#define NEWFILE_MAX 65536
#define NEWFILE_PATH 4096

#define MODE_TRACED 0
#define MODE_RECORD 1
#define MODE_REPLAY 2

/* CTL_FLAGS: the process maps memory shared that may change under it (by
   another process, or its own write or truncation): the recorder looks at
   the calls around such changes. Shared mappings that cannot change but
   by a call to their file are in CTL_SHARED_MAPS alone. */
#define FLAG_SHARED 1
/* CTL_FLAGS: a thread of the process asked for its rdtsc to fault
   (PR_TSC_SIGSEGV): patched rdtsc sites trap, the recorder sorts it out. */
#define FLAG_TSC_TRAP 2
/* CTL_FLAGS: the process runs alone on a run queue of the recorder's (one
   thread, no memory shared): a read of a pipe or a socket with nothing to
   read, a poll or an epoll_wait, waits in the hook, no other thread
   needing the CPU meanwhile. A
   signal or an interrupt that stops the thread there gets RETRACE from
   the recorder, and the hook makes the call traced. */
#define FLAG_WAIT 4
/* CTL_FLAGS: other processes run side by side with this one: a write to a
   standard stream is made traced, so that its event takes its place among
   theirs in the order the bytes reached the stream (but for a memory
   device, /dev/null, whose bytes no one sees in any order). */
#define FLAG_STD_TRACED 8
/* The error the recorder gives a read waiting in the hook that it stops
   (a signal, an interrupt): no call returns it. */
#define RETRACE 4000
