// xgetbv.c: asks xgetbv which register states the kernel enabled, N times
// (argv[1], default 100) where the code zeroes ecx just before (a site the
// hook may answer once patched), and 3 times with ecx from a variable (a
// site that stays trapped), and prints what it was told.
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static unsigned long long xcr0(void) {
	unsigned lo, hi;
	__asm__ volatile("xor %%ecx, %%ecx\n\txgetbv" : "=a"(lo), "=d"(hi) : : "rcx");
	return (unsigned long long)hi << 32 | lo;
}

__attribute__((noinline)) static unsigned long long xcr(unsigned ecx) {
	unsigned lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(ecx));
	return (unsigned long long)hi << 32 | lo;
}

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 100;
	unsigned long long first = xcr0(), same = 0;
	for (int i = 0; i < n; i++)
		same += xcr0() == first;
	unsigned long long other = 0;
	for (int i = 0; i < 3; i++)
		other |= xcr((unsigned)argc - 1 - (argc > 1));
	printf("ymm-state=%d zmm-state=%d same=%llu of %d, other %s\n", (first & 6) == 6, (first & 0xe0) == 0xe0,
	       same, n, other == first ? "agrees" : "differs");
	return 0;
}
