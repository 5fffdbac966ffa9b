/* A call chain main -> a -> b -> c that stops itself so a test can read
 * its stack. With argument "segv", c faults and the SIGSEGV handler stops
 * instead, so the stack crosses a signal frame. Every function prints the
 * values of its variables, which the tests compare with what the DWARF
 * locations give. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__thread int tl = 42;
int counter = 7;
float ratio = 2.5f; /* gives the unit a float base type for typed DWARF operations */
int *volatile nullp;
static int segv;

struct pt {
	long x, y;
};

static void handler(int sig)
{
	printf("handler sig=%d\n", sig);
	printf("ready\n");
	fflush(stdout);
	raise(SIGSTOP);
	exit(0);
}

__attribute__((noinline)) int c(int x)
{
	int z = x * 5;
	printf("c x=%d z=%d\n", x, z);
	printf("counter=%p tl=%p\n", (void *)&counter, (void *)&tl);
	fflush(stdout);
	if (segv) {
		*nullp = z;
	} else {
		printf("ready\n");
		fflush(stdout);
		raise(SIGSTOP);
	}
	return x + z + counter + (int)ratio;
}

/* noipa keeps gcc from knowing sq is pure. At -O2, x is dead once sq
 * is called and rdi is clobbered by the call, so during the call to c its
 * location is DW_OP_entry_value(DW_OP_reg5), resolved through a's call
 * site. */
__attribute__((noipa)) int sq(int x)
{
	return x * x;
}

__attribute__((noinline)) int b(int x)
{
	int y = sq(x) + 1;
	int r = c(y);
	return r + y;
}

__attribute__((noinline)) int a(int x)
{
	struct pt p = {x, x + 100};
	int r = b(x + 3);
	return r + p.x * p.y + x;
}

int main(int argc, char **argv)
{
	segv = argc > 1 && strcmp(argv[1], "segv") == 0;
	if (segv) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = handler;
		sigaction(SIGSEGV, &sa, NULL);
	}
	printf("main argc=%d\n", argc);
	printf("a x=%d p.x=%d p.y=%d\n", argc + 10, argc + 10, argc + 110);
	printf("b x=%d y=%d\n", argc + 13, (argc + 13) * (argc + 13) + 1);
	fflush(stdout);
	return a(argc + 10) & 1;
}
