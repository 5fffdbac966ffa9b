// crash.c: a synchronous signal. Builds a linked list, corrupts a next
// pointer, and walks it: the walk dereferences garbage/NULL and dies with
// SIGSEGV (exit status 139 under a shell). The recorder must report 139 and
// replay must reproduce the fault at the same instruction.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct node {
	int value;
	struct node *next;
};

static int sum(struct node *n) {
	int s = 0;
	while (n != NULL) {
		s += n->value;
		n = n->next;
	}
	return s;
}

int main(void) {
	struct node *head = NULL;
	for (int i = 0; i < 5; i++) {
		struct node *n = malloc(sizeof *n);
		n->value = i;
		n->next = head;
		head = n;
	}
	printf("sum before corruption: %d\n", sum(head));
	head->next->next = (struct node *)(uintptr_t)0x10; /* garbage near NULL */
	printf("about to crash\n");
	fflush(stdout);
	printf("sum after corruption: %d\n", sum(head)); /* SIGSEGV */
	return 0;
}
