/* list_test.c: the demo's list as a test: set_name overflows name[8] into
 * the next pointer, and sum() crashes on it. */
#include <stdio.h>
#include <stdlib.h>

struct node {
	char name[8];
	struct node *next;
	int value;
};

static void set_name(struct node *n, const char *src)
{
	size_t i;
	for (i = 0; src[i] != '\0'; i++)
		n->name[i] = src[i];
	n->name[i] = '\0';
}

static int sum(struct node *head)
{
	int total = 0;
	for (struct node *n = head; n != NULL; n = n->next)
		total += n->value;
	return total;
}

int main(void)
{
	struct node *c = calloc(1, sizeof *c);
	struct node *b = calloc(1, sizeof *b);
	struct node *a = calloc(1, sizeof *a);
	a->next = b;
	b->next = c;
	a->value = 1;
	b->value = 2;
	c->value = 3;
	set_name(a, "alpha");
	set_name(b, "bravo-overflowing");
	set_name(c, "charlie");
	printf("sum %d\n", sum(a));
	return 0;
}
