/* At -O2 gcc keeps v and s in registers and folds c to a constant, and
 * describes the pointers the inlined helpers take to them as implicit
 * pointers (DW_OP_implicit_pointer): the pointers no longer exist, what
 * they point to does. */
#include <stdio.h>

struct pt {
	long x;
	long y;
};

volatile int sink;
volatile int source = 1;

__attribute__((noinline)) void observe(int v)
{
	sink = v;
}

__attribute__((noinline)) int seed(int n)
{
	return source + n;
}

static inline int scale(int *p, int k)
{
	observe(*p);
	return *p * k;
}

static inline int bump(int *p)
{
	observe(*p + 1);
	return *p + 1;
}

static inline int norm(struct pt *q)
{
	observe(q->y);
	return q->x * q->x + q->y * q->y;
}

int main(void)
{
	int v = seed(20);
	int c = 7;
	struct pt s = { seed(2), seed(3) };
	int r = scale(&v, 3);
	r += bump(&c);
	r += norm(&s);
	printf("%d %ld %d\n", r, s.x, v);
	return 0;
}
