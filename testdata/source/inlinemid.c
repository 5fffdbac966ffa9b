// A call made from inside an inlined function (at -O2): a backtrace from
// the callee shows the inlined function with the return address, and the
// function it is inlined into without one, as gdb does.
#include <stdio.h>

__attribute__((noinline)) int leaf(int v)
{
	return v * 3 + 1;
}

static inline int mid(int v)
{
	int r = leaf(v + 1);
	return r * 2;
}

__attribute__((noinline)) int outer(int v)
{
	return mid(v) + 5;
}

int main(int argc, char **argv)
{
	(void)argv;
	printf("%d\n", outer(argc + 10));
	return 0;
}
