// cpufeatures.c: prints what cpuid tells the program of a few instruction
// set extensions (as libgcc's __builtin_cpu_supports reads them), then
// copies and measures a buffer through libc, whose ifuncs chose their
// variants from the same answers at load.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
	__builtin_cpu_init();
	printf("sse4.2=%d popcnt=%d avx=%d avx2=%d avx512f=%d\n", !!__builtin_cpu_supports("sse4.2"),
	       !!__builtin_cpu_supports("popcnt"), !!__builtin_cpu_supports("avx"), !!__builtin_cpu_supports("avx2"),
	       !!__builtin_cpu_supports("avx512f"));
	size_t n = 1 << 20;
	char *a = malloc(n), *b = malloc(n);
	memset(a, 'x', n - 1);
	a[n - 1] = 0;
	memcpy(b, a, n);
	printf("len=%zu\n", strlen(b));
	return 0;
}
