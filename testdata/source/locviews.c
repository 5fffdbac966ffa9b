/* Location views: at -O2, gcc binds the arguments of a call inlined at the
 * very start of its caller (probe in lookup) only at that first
 * instruction, before the code of the call overwrites them: their
 * location lists have an empty address range there, [pc, pc), told apart
 * by view numbers. gdb 13 reads no views, but takes an empty range at the
 * entry pc of the function it is in as valid there, so that at a
 * breakpoint on probe, or after a step into it from lookup's entry, the
 * arguments show their values. The calls come from a loop, with
 * arguments main computes. */
#include <stdio.h>

struct table {
	int slot[16];
};

static inline int probe(const struct table *t, int key)
{
	int h = t->slot[key & 15];
	return h * 5;
}

static inline int settle(int h)
{
	int z = h ^ 0x3c;
	return z + 7;
}

__attribute__((noinline)) double lookup(const struct table *t, int key)
{
	int h = probe(t, key);
	int z = settle(h);
	return z + 0.25;
}

int main(int argc, char **argv)
{
	struct table tab;
	for (int i = 0; i < 16; i++)
		tab.slot[i] = i * i + argc;
	double sum = 0;
	for (int i = 0; i < 5; i++)
		sum += lookup(&tab, i * 3 + argc);
	printf("%.2f\n", sum);
	return 0;
}
