/* Lines to step over, into and back through. */
#include <stdio.h>

static int square(int x)
{
	int y = x * x;
	return y;
}

static int add(int a, int b)
{
	int c = a + b;
	return c;
}

int main(void)
{
	int total = 0;
	for (int i = 1; i <= 3; i++) {
		int sq = square(i);
		total = add(total, sq);
	}
	printf("total %d\n", total);
	total = add(total, 1);
	return total == 15 ? 0 : 1;
}
