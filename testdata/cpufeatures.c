// cpufeatures.c: prints what cpuid tells the program of a few instruction
// set extensions (as libgcc's __builtin_cpu_supports reads them) and which
// register states xgetbv says the kernel enabled, then copies and measures
// a buffer through libc, whose ifuncs chose their variants from the same
// answers at load.
#include <cpuid.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
	__builtin_cpu_init();
	printf("sse4.2=%d popcnt=%d avx=%d avx2=%d avx512f=%d\n", !!__builtin_cpu_supports("sse4.2"),
	       !!__builtin_cpu_supports("popcnt"), !!__builtin_cpu_supports("avx"), !!__builtin_cpu_supports("avx2"),
	       !!__builtin_cpu_supports("avx512f"));
	unsigned a, b, c, d;
	if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_OSXSAVE)) {
		unsigned lo, hi;
		__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
		printf("ymm-state=%d zmm-state=%d\n", (lo & 6) == 6, (lo & 0xe0) == 0xe0);
	} else {
		printf("ymm-state=0 zmm-state=0\n");
	}
	size_t n = 1 << 20;
	char *p = malloc(n), *q = malloc(n);
	memset(p, 'x', n - 1);
	p[n - 1] = 0;
	memcpy(q, p, n);
	printf("len=%zu\n", strlen(q));
	return 0;
}
