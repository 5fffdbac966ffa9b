/* An always-inline function: its frame exists only in the debug
 * information. */
#include <stdio.h>

static inline __attribute__((always_inline)) int twice(int v)
{
	int r = v * 2;
	return r;
}

__attribute__((noinline)) int compute(int v)
{
	int t = twice(v + 1);
	return t + 1;
}

int main(int argc, char **argv)
{
	(void)argv;
	printf("%d\n", compute(argc + 20));
	return 0;
}
