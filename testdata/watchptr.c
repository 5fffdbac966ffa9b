// watchptr.c: a global pointer to one int of a pair, written through it
// while the other int, next to it, is written too (TestWatchThroughPointer).
#include <stdlib.h>

struct pair {
	int a, b;
};

int *target;

int main(void) {
	struct pair *p = calloc(1, sizeof *p);
	target = &p->a;
	for (int i = 1; i <= 4; i++) {
		p->b = 100 + i; /* the neighbour */
		*target = i;    /* the write */
	}
	return p->a + p->b == 108 ? 0 : 1;
}
