// ctor: a constructor, run before main, calls hook with 1 to 5; start
// must stop at a breakpoint there whose condition holds, as gdb's run does.
#include <stdio.h>

static int seen;

__attribute__((noinline)) void hook(int n) { seen += n; }

__attribute__((constructor)) static void init(void) {
	for (int i = 1; i <= 5; i++)
		hook(i);
}

int main(void) {
	printf("%d\n", seen);
	return 0;
}
