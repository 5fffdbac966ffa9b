// A long-running program for the attach tests: two threads, a SIGUSR1
// handler (SA_RESTART, SA_SIGINFO, a mask) run on an alternate stack, commands read from
// a pipe (stdin), a file open at an offset, a malloc'd buffer it fills.
// With -d it forks and its parent exits, so that it is nobody's child: the
// tests attach to it as to a service started elsewhere.
// Commands, one per line on stdin: "q" prints its own view of these facts
// on stdout and ends with "end"; "x" exits.
// Usage: target [-d] FILE MIB
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t usr1;
static volatile unsigned long ticks;
static char altstack[64 * 1024];

static volatile int usr1code = 1; // si_code of the last SIGUSR1 (1: none yet)

static void on_usr1(int sig, siginfo_t *info, void *ctx) {
	(void)sig;
	(void)ctx;
	usr1++;
	usr1code = info->si_code;
}

static void *worker(void *arg) {
	(void)arg;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	struct timespec ts = {0, 1000000};
	for (;;) {
		ticks++;
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int main(int argc, char **argv) {
	int daemon = argc > 1 && strcmp(argv[1], "-d") == 0;
	if (daemon) {
		argv++;
		argc--;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: target [-d] FILE MIB\n");
		return 2;
	}
	if (daemon) {
		pid_t child = fork();
		if (child < 0) {
			perror("fork");
			return 1;
		}
		if (child > 0)
			_exit(0);
	}
	size_t size = (size_t)atol(argv[2]) << 20;
	unsigned char *buf = malloc(size);
	for (size_t i = 0; i < size; i++)
		buf[i] = (unsigned char)(i * 7 + 1);
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	lseek(fd, 123, SEEK_SET);

	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
	sigaltstack(&ss, NULL);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_RESTART | SA_ONSTACK | SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaction(SIGUSR1, &sa, NULL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGWINCH);
	sigprocmask(SIG_BLOCK, &set, NULL);

	pthread_t th;
	pthread_create(&th, NULL, worker, NULL);

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("pid %d\n", getpid());
	char line[64];
	while (fgets(line, sizeof line, stdin)) {
		if (line[0] == 'x')
			return 0;
		if (line[0] != 'q')
			continue;
		struct sigaction cur;
		sigaction(SIGUSR1, NULL, &cur);
		sigset_t mask;
		sigprocmask(SIG_BLOCK, NULL, &mask);
		stack_t alt;
		sigaltstack(NULL, &alt);
		unsigned long sum = 0;
		for (size_t i = 0; i < size; i++)
			sum += buf[i];
		printf("handler %p\n", (void *)cur.sa_handler);
		printf("flags %#x\n", (unsigned)cur.sa_flags);
		printf("samask %#lx\n", *(unsigned long *)&cur.sa_mask);
		printf("mask %#lx\n", *(unsigned long *)&mask);
		printf("altstack %p %zu\n", alt.ss_sp, alt.ss_size);
		printf("fd %d %ld\n", fd, (long)lseek(fd, 0, SEEK_CUR));
		printf("buf %p %zu %lu\n", (void *)buf, size, sum);
		printf("brk %p\n", sbrk(0));
		printf("usr1 %d %d\n", (int)usr1, usr1code);
		printf("ticks %lu\n", ticks);
		printf("end\n");
	}
	return 0;
}
