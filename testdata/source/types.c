/* Declarations of every shape, for ptype, whatis and function values
   (compared with gdb). */
#include <stdio.h>

typedef struct node {
	char name[8];
	struct node *next;
	int value;
	unsigned flag : 1;
	unsigned kind : 3;
} node_t;
enum color { RED, GREEN, BLUE = 5, CYAN };
struct anon {
	int x;
	union {
		int i;
		float f;
	} u;
	struct {
		int a, b;
	} pair;
};
typedef int (*cmp_fn)(const void *, const void *);

int compare(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static int sum(int n, ...)
{
	return n;
}

int main(void)
{
	node_t n = {"a", 0, 1, 1, 2};
	node_t *p = &n;
	enum color c = BLUE;
	struct anon an = {0};
	cmp_fn f = compare;
	const char *const s = "x";
	int grid[2][3] = {{0}};
	char *names[4] = {0};
	volatile long v = sum(1, 2);
	printf("%d %d %d %p %s %d %p %ld\n", p->value, c, an.x, (void *)f, s, grid[0][0], (void *)names, v);
	return 0; /* here */
}
