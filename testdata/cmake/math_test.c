// math_test.c: a test that passes.
#include <stdio.h>

int main(void)
{
	int sum = 0;
	for (int i = 1; i <= 10; i++)
		sum += i;
	if (sum != 55) {
		fprintf(stderr, "sum %d, want 55\n", sum);
		return 1;
	}
	return 0;
}
