// rdtsc.c: reads the time-stamp counter n times at one site, as a
// profiler or a spin-wait does, and checks it never goes back.
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static unsigned long long read_tsc(void) {
	unsigned lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (unsigned long long)hi << 32 | lo;
}

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 10000;
	unsigned long long first = read_tsc(), prev = first, back = 0;
	for (int i = 1; i < n; i++) {
		unsigned long long t = read_tsc();
		back += t < prev;
		prev = t;
	}
	printf("%d reads, %llu went back, %s\n", n, back, prev > first ? "time went on" : "time stood still");
	return 0;
}
