// uaf.c: a job's handler is set through a pointer to a block already
// freed; the next job gets the same block and calls the stale handler.
#include <stdio.h>
#include <stdlib.h>

struct job {
	char name[16];
	void (*run)(struct job *);
};

static void hello(struct job *j) { printf("hello from %s\n", j->name); }

static struct job *last;

__attribute__((noinline)) static void finish(struct job *j)
{
	free(j);
	last = j; /* kept for a retry: dangling */
}

__attribute__((noinline)) static void retry_later(void)
{
	last->run = (void (*)(struct job *))0xdead0000; /* writes freed memory */
}

int main(void)
{
	struct job *a = malloc(sizeof *a);
	snprintf(a->name, sizeof a->name, "first");
	a->run = hello;
	a->run(a);
	finish(a);
	retry_later();
	struct job *b = malloc(sizeof *b); /* the same block again */
	snprintf(b->name, sizeof b->name, "second");
	b->run(b);
	return 0;
}
