// 32-bit system calls made with int $0x80 from a 64-bit program: getpid
// (20) and write (4) take i386 numbers and their arguments in ebx, ecx,
// edx. They are recorded, listed and replayed as i386 calls.
// A kernel without IA32 emulation (ia32_emulation=0) faults on int $0x80:
// the program says so and has nothing else to check.
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static sigjmp_buf fault;

static void onfault(int sig) {
	(void)sig;
	siglongjmp(fault, 1);
}

static long int80(long nr, long a, long b, long c) {
	long ret;
	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
	return ret;
}

int main(void) {
	// int $0x80 passes 32-bit pointers: the buffer must lie below 4 GiB.
	char *buf = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (buf == MAP_FAILED)
		return 1;
	signal(SIGSEGV, onfault);
	if (sigsetjmp(fault, 1)) {
		printf("int $0x80 is not available here\nOK\n");
		return 0;
	}
	long pid = int80(20, 0, 0, 0);
	signal(SIGSEGV, SIG_DFL);
	printf("getpid by int $0x80 matches: %d\n", pid == getpid());
	fflush(stdout);
	strcpy(buf, "written by int $0x80\n");
	long n = int80(4, 1, (long)buf, strlen(buf));
	printf("write returned %ld\n", n);
	long bad = int80(4, 1, 0, 5);
	printf("write of NULL returned %ld\n", bad);
	printf("OK\n");
	return 0;
}
