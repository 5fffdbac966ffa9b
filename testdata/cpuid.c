// cpuid.c: asks cpuid many times at one site, as a loader asks for its
// cache sizes (leaf 4, a subleaf at a time), then runs itself again once
// (a later process maps the same code).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) static unsigned cache_levels(void) {
	unsigned n = 0;
	for (unsigned sub = 0; sub < 16; sub++) {
		unsigned a = 4, b, c = sub, d;
		__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
		if ((a & 0x1f) == 0)
			break;
		n++;
	}
	return n;
}

int main(int argc, char **argv) {
	int rounds = argc > 1 ? atoi(argv[1]) : 100;
	unsigned levels = 0;
	for (int i = 0; i < rounds; i++)
		levels = cache_levels();
	unsigned a = 0, b, c = 0, d;
	__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
	char vendor[13];
	memcpy(vendor, &b, 4), memcpy(vendor + 4, &d, 4), memcpy(vendor + 8, &c, 4);
	vendor[12] = 0;
	printf("%s: %u cache levels, %d rounds, vendor %s\n", argc > 2 ? "child" : "parent", levels, rounds, vendor);
	fflush(stdout);
	if (argc > 2)
		return 0;
	pid_t pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], "10", "child", (char *)NULL);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
