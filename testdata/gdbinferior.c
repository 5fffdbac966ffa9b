// The program gdb debugs in TestRecordGDB (e2e/gdb_test.go): a breakpoint
// in square, a next and a finish, variables to print, a run to its end.
#include <stdio.h>

static int square(int x) {
	int y = x * x;
	return y;
}

int main(void) {
	int total = 0;
	for (int i = 1; i <= 3; i++)
		total += square(i);
	printf("total %d\n", total);
	return 0;
}
