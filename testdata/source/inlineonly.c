/* Functions that exist only inlined (at -O2 no out-of-line copy is
 * left): a breakpoint on one has a location in each call, and in work the
 * code of mix ends where that of fold starts, so that a finish out of mix
 * stops in work at the line of fold's call, not in fold. In chain, the
 * calls of first and second start with empty address ranges (their code
 * moved away), which are no starts: second starts where first ends. The
 * arguments are constants, whose entry values the call sites give. */
#include <stdio.h>

static inline __attribute__((always_inline)) int mix(int a, int b)
{
	int m = a * 31 + b;
	return m ^ (m >> 3);
}

static inline __attribute__((always_inline)) int fold(int x)
{
	int f = x + 7;
	return f * f;
}

__attribute__((noipa)) int work(int a, int b)
{
	int r = mix(a, b);
	r += fold(r);
	return r;
}

__attribute__((noipa)) int other(int a)
{
	return mix(a, a + 1) + 1;
}

static inline __attribute__((always_inline)) int first(int x)
{
	int y = x * 3;
	return y + 1;
}

static inline __attribute__((always_inline)) int second(int x)
{
	int z = x ^ 5;
	return z * 7;
}

__attribute__((noipa)) int chain(int a, int b)
{
	int u = first(a);
	int v = second(b);
	return u * v;
}

int main(void)
{
	int s = work(1, 2);
	s += other(4);
	s += mix(s, 3);
	s += chain(3, 4);
	printf("%d\n", s);
	return 0;
}
