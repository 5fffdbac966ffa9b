// buffered_memory.c: the calls the hook page records in the program but
// replay makes again (issue 23): private anonymous mmap, mprotect, munmap
// and brk, rt_sigaction and rt_sigprocmask; and ioctl's TCGETS,
// TIOCGWINSZ and TIOCGPGRP, N rounds (argv[1]). Each round maps its own executable
// (argv[0]) privately too, a file the recorder has stored by then, and
// sums bytes of it: replay fills those mappings from the trace. And it
// execs a path that names nothing, as a shell's search of PATH does. Each round installs a handler, maps
// memory, fills it, protects it, raises a signal the handler counts,
// blocks the signal, raises it again and unblocks it: the handler must
// have run when sigprocmask returns, as POSIX says. What it prints
// depends on every answer.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <errno.h>
#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

static volatile sig_atomic_t handled;

/* The executable stays bigger than the small files replay packs into one
   memfd (engine/replay/packfile.go): its mappings come from the file. */
__attribute__((used)) static const unsigned char pad[72 << 10] = {1};

static void on_usr1(int sig) { handled += sig; }

/* mapped_own is called with the round's mapping of the program itself,
   where a test stops to look at it. */
__attribute__((noinline)) void mapped_own(const unsigned char *f) { __asm__ volatile("" : : "r"(f) : "memory"); }

int main(int argc, char **argv) {
	int rounds = argc > 1 ? atoi(argv[1]) : 10;
	unsigned long sum = 0;
	int late = 0, absent = 0;
	for (int i = 0; i < rounds; i++) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_usr1;
		sigaction(SIGUSR1, &sa, NULL);
		size_t len = 4096 * (1 + i % 4);
		unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return 1;
		for (size_t j = 0; j < len; j += 512)
			p[j] = (unsigned char)(i + j);
		mprotect(p, len, PROT_READ);
		for (size_t j = 0; j < len; j += 512)
			sum = sum * 31 + p[j];
		munmap(p, len);
		int fd = open(argv[0], O_RDONLY);
		unsigned char *f = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, fd, 0);
		if (f == MAP_FAILED)
			return 1;
		mapped_own(f);
		close(fd);
		for (size_t j = 0; j < 8192; j += 256)
			sum = sum * 31 + f[j];
		munmap(f, 8192);
		void *top = sbrk(0);
		sbrk(4096);
		sbrk(-4096);
		sum += (unsigned long)top & 0xfff;
		raise(SIGUSR1);
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		raise(SIGUSR1);
		int before = handled;
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		if (handled == before)
			late++;
		char *args[] = {"nothing", NULL};
		execv(i % 2 ? "/nonexistent/nothing" : "/etc/passwd/nothing", args);
		absent += errno == ENOENT || errno == ENOTDIR;
		struct termios t;
		struct winsize w;
		sum += ioctl(1, TCGETS, &t) == 0 ? 1 : 2;
		sum += ioctl(1, TIOCGWINSZ, &w) == 0 ? w.ws_col : 3;
		pid_t fg;
		sum += ioctl(1, TIOCGPGRP, &fg) == 0 ? (unsigned)fg : 4;
	}
	printf("sum %lx handled %d late %d absent %d\n", sum, (int)handled, late, absent);
	return late != 0;
}
