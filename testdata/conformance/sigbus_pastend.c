// Faults a recording must see again: a read of a private file mapping's
// page that lies past the file's end (SIGBUS: replay maps file contents as
// anonymous memory, which never faulted), in a mapping of three pages of a
// five-byte file and one that starts past the end; and a write into a page
// made PROT_NONE (SIGSEGV). Each is caught, and the program goes on.
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static sigjmp_buf env;

static void caught(int sig) { siglongjmp(env, sig); }

static const char *touch(volatile char *p, int write) {
	int sig = sigsetjmp(env, 1);
	if (sig == 0) {
		if (write)
			*p = 1;
		else
			(void)*p;
		return "no fault";
	}
	return sig == SIGBUS ? "SIGBUS" : sig == SIGSEGV ? "SIGSEGV" : "another signal";
}

int main(void) {
	signal(SIGBUS, caught);
	signal(SIGSEGV, caught);
	char path[] = "/tmp/rewind-sigbus-XXXXXX";
	int fd = mkstemp(path);
	unlink(path);
	write(fd, "hello", 5);
	char *p = mmap(NULL, 3 * 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	printf("first page: %.5s, its tail: %d\n", p, p[100]);
	printf("second page: %s\n", touch(p + 4096, 0));
	printf("third page: %s\n", touch(p + 2 * 4096 + 7, 0));
	char *q = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 4096);
	printf("a mapping past the end: %s\n", touch(q, 1));
	char *r = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	r[0] = 1;
	mprotect(r, 4096, PROT_NONE);
	printf("PROT_NONE: %s\n", touch(r, 1));
	mprotect(r, 4096, PROT_READ);
	printf("PROT_READ again: %d\n", r[0]);
	printf("OK\n");
	return 0;
}
