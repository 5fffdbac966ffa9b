// The hook page without a recorder: maps hook.bin (argv[1]) at its
// address, applies the patches of argv[2] (stubs at 0x10000000 and jumps
// over this program's own system call sites, as the recorder would), makes
// calls through the patched sites in record mode, and writes the records
// to argv[3]. Then, in replay mode, it makes calls answered from the
// records of argv[4]. Built without PIE, so that the test knows the sites'
// addresses from the symbol table.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../src/layout.h" // the page's addresses and the control page's fields

// The sites: a call number into eax, then syscall, as glibc's wrappers.
__asm__(".text\n"
        ".globl site_getppid, site_clock_gettime, site_write, site_generic\n"
        ".p2align 4\nsite_getppid: mov $110, %eax\nsyscall\nret\n"
        ".p2align 4\nsite_clock_gettime: mov $228, %eax\nsyscall\nret\n"
        ".p2align 4\nsite_write: mov $1, %eax\nsyscall\nret\n"
        // The number from the caller (glibc's read loads it earlier); the cmp's
        // flags decide the result.
        ".p2align 4\nsite_generic: mov %rdi, %rax\nmov %rsi, %rdi\nsyscall\n"
        "cmp $-4096, %rax\nja 1f\nret\n1: mov $-1, %rax\nret\n");
long site_getppid(void);

// call2 calls fn(a0, a1) with the other argument registers zero: a
// replayed call matches its record only if all six are the recorded ones.
__asm__(".text\n.globl call2\ncall2:\nmov %rdi, %rax\nmov %rsi, %rdi\nmov %rdx, %rsi\n"
        "xor %edx, %edx\nxor %r10d, %r10d\nxor %r8d, %r8d\nxor %r9d, %r9d\njmp *%rax\n");
long call2(void *fn, long a0, long a1);
long site_clock_gettime(long clock, struct timespec *ts);
long site_write(long fd, const void *buf, long n);
long site_generic(long nr, long a0);

// regsKept calls the getppid site with every register the hook must keep
// set to a pattern, and returns a bit for each one that changed.
static long regsKept(void) {
	long bad;
	__asm__ volatile(
	    "push %%rbx\npush %%rbp\npush %%r12\npush %%r13\npush %%r14\npush %%r15\n"
	    "mov $0x1111, %%rbx\nmov $0x2222, %%rbp\nmov $0x3333, %%r12\nmov $0x4444, %%r13\n"
	    "mov $0x5555, %%r14\nmov $0x6666, %%r15\nmov $0x7777, %%rdi\nmov $0x8888, %%rsi\n"
	    "mov $0x9999, %%rdx\nmov $0xaaaa, %%r8\nmov $0xbbbb, %%r9\nmov $0xcccc, %%r10\n"
	    "call site_getppid\n"
	    "xor %%rax, %%rax\n"
	    "cmp $0x1111, %%rbx\nsetne %%al\nshl $1, %%rax\n"
	    "cmp $0x2222, %%rbp\nsetne %%cl\nor %%cl, %%al\nshl $1, %%rax\n"
	    "cmp $0x3333, %%r12\nsetne %%cl\nor %%cl, %%al\nshl $1, %%rax\n"
	    "cmp $0x4444, %%r13\nsetne %%cl\nor %%cl, %%al\nshl $1, %%rax\n"
	    "cmp $0x5555, %%r14\nsetne %%cl\nor %%cl, %%al\nshl $1, %%rax\n"
	    "cmp $0x6666, %%r15\nsetne %%cl\nor %%cl, %%al\nshl $1, %%rax\n"
	    "cmp $0x7777, %%rdi\nsetne %%cl\nor %%cl, %%al\nshl $1, %%rax\n"
	    "cmp $0x8888, %%rsi\nsetne %%cl\nor %%cl, %%al\nshl $1, %%rax\n"
	    "cmp $0x9999, %%rdx\nsetne %%cl\nor %%cl, %%al\nshl $1, %%rax\n"
	    "cmp $0xaaaa, %%r8\nsetne %%cl\nor %%cl, %%al\nshl $1, %%rax\n"
	    "cmp $0xbbbb, %%r9\nsetne %%cl\nor %%cl, %%al\nshl $1, %%rax\n"
	    "cmp $0xcccc, %%r10\nsetne %%cl\nor %%cl, %%al\n"
	    "pop %%r15\npop %%r14\npop %%r13\npop %%r12\npop %%rbp\npop %%rbx\n"
	    : "=a"(bad)
	    :
	    : "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "memory", "cc");
	return bad;
}

// replay_ts is where the replayed clock_gettime writes: a global, whose
// address the test reads from the symbol table.
struct timespec replay_ts;

static void *slurp(const char *path, long *n) {
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		perror(path);
		exit(2);
	}
	static char buf[1 << 16];
	*n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	return buf;
}

int main(int argc, char **argv) {
	if (argc != 5) {
		fprintf(stderr, "usage: harness HOOK.BIN PATCHES RECORDS REPLAY\n");
		return 2;
	}
	if (mmap((void *)HOOK_BASE, HOOK_SIZE, PROT_READ | PROT_WRITE | PROT_EXEC,
	         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != (void *)HOOK_BASE ||
	    mmap((void *)0x10000000, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
	         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != (void *)0x10000000) {
		perror("mmap");
		return 2;
	}
	long n;
	char *img = slurp(argv[1], &n);
	memcpy((void *)HOOK_BASE, img, n);
	// Patches: {u64 addr, u32 len, bytes}...
	char *p = slurp(argv[2], &n), *end = p + n;
	while (p < end) {
		uint64_t addr;
		uint32_t len;
		memcpy(&addr, p, 8);
		memcpy(&len, p + 8, 4);
		p += 12;
		uintptr_t page = addr & ~4095UL;
		mprotect((void *)page, 8192, PROT_READ | PROT_WRITE | PROT_EXEC);
		memcpy((void *)addr, p, len);
		p += len;
	}
	// stdout is the stream rewind would pass: its writes stay traced.
	struct stat st;
	fstat(1, &st);
	*(volatile uint64_t *)(HOOK_CTL + CTL_STREAMS) = st.st_dev;
	*(volatile uint64_t *)(HOOK_CTL + CTL_STREAMS + 8) = st.st_ino;
	*(volatile uint32_t *)HOOK_CTL = 1; // record mode
	long ppid = site_getppid();
	struct timespec ts;
	long cr = site_clock_gettime(CLOCK_MONOTONIC, &ts);
	long wr = site_write(1, "written\n", 8);
	long bad = regsKept();
	long gen = site_generic(110, 0);
	// A write the hook records, with the hash of its bytes: to /dev/null,
	// a memory device, which never blocks.
	long hw = site_write(open("/dev/null", O_WRONLY), "the hook hashes these 42 bytes: crc32c!!!\n", 42);
	printf("getppid %ld want %ld\n", ppid, (long)getppid());
	printf("clock_gettime %ld %ld.%09ld\n", cr, (long)ts.tv_sec, ts.tv_nsec);
	printf("write %ld %ld\n", wr, hw);
	printf("regs changed %#lx\n", bad);
	printf("generic %ld\n", gen);
	printf("calls %lu\n", *(volatile uint64_t *)(HOOK_CTL + CTL_CALLS));
	FILE *f = fopen(argv[3], "wb");
	fwrite((void *)HOOK_BUF, 1, *(volatile uint64_t *)(HOOK_CTL + CTL_LEN), f);
	fclose(f);

	// Replay: the records of argv[4] answer the calls that match them.
	char *recs = slurp(argv[4], &n);
	memcpy((void *)HOOK_BUF, recs, n);
	*(volatile uint64_t *)(HOOK_CTL + CTL_LEN) = n;
	*(volatile uint64_t *)(HOOK_CTL + CTL_POS) = 0;
	*(volatile uint32_t *)HOOK_CTL = 2; // replay mode
	long rppid = call2(site_getppid, 0, 0);
	struct timespec rt;
	call2(site_clock_gettime, CLOCK_REALTIME, (long)&rt); // not the recorded call: made
	long rcr = call2(site_clock_gettime, CLOCK_MONOTONIC, (long)&replay_ts);
	long rppid2 = call2(site_getppid, 0, 0); // no record left: made
	printf("replay getppid %ld clock_gettime %ld %ld.%09ld realtime %d getppid %ld pos %lu\n", rppid, rcr,
	       (long)replay_ts.tv_sec, replay_ts.tv_nsec, rt.tv_sec > 1000000000, rppid2, *(volatile uint64_t *)(HOOK_CTL + CTL_POS));
	return 0;
}
