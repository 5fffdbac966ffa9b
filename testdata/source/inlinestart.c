// A function whose body starts with inlined calls (at -O2): a breakpoint
// on it stops where the first inlined call starts, shown in the function
// at the line of the call, as gdb shows it; step enters the inlined call.
#include <stdio.h>
#include <stdlib.h>

struct row { int v[8]; };

static inline int column_mem(const struct row *r, int i)
{
	int x = r->v[i & 7];
	return x * 3;
}

static inline int scramble(int x)
{
	int y = x ^ 0x55;
	return y + 1;
}

__attribute__((noinline)) double column_double(const struct row *r, int i)
{
	int m = column_mem(r, i);
	int n = scramble(m);
	return n + 0.5;
}

int main(int argc, char **argv)
{
	struct row r;
	for (int i = 0; i < 8; i++)
		r.v[i] = i * argc + 1;
	double s = 0;
	for (int i = 0; i < 4; i++)
		s += column_double(&r, i + argc);
	printf("%.1f\n", s);
	return 0;
}
