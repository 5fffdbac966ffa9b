// overflow.c: a pointer corrupted by an overflowing write. set_name copies
// a name longer than the buffer before the pointer, so its last bytes land
// in r.score, and main dies dereferencing it. origin r.score at the crash
// must land on the copying line, one byte write at a time going further
// back, then on the assignment in main.
#include <stdio.h>

struct record {
	char name[8];
	int *score;
};

static int total = 42;

__attribute__((noinline)) static void set_name(struct record *r, const char *src) {
	char *dst = r->name;
	while ((*dst++ = *src++) != 0) /* no bound: overflows into score */
		;
}

int main(int argc, char **argv) {
	struct record r;
	r.score = &total;
	set_name(&r, argc > 1 ? argv[1] : "overflow!!!!");
	printf("score %d\n", *r.score);
	return 0;
}
