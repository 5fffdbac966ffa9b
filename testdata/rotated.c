// rotated: a loop entered through its middle, as compilers lay out a while
// loop (the function jumps to the test): walk's loop begins with two short
// instructions, and the entry branches to the second. Replay patches a run
// of instructions with a jump (preemption searches, counters): a branch
// into the run's middle must still run the program's code.
//
// rotated CALLS N: calls walk(N) CALLS times, with no system call between,
// and prints the total of the sums N + … + 1.
#include <stdio.h>
#include <stdlib.h>

long walk(long n);

__asm__(".text\n"
        ".globl walk\n"
        "walk:\n"
        "	xor %eax, %eax\n"
        "	lea 1(%rdi), %rdx\n"
        "	jmp walk_dec\n"
        ".globl walk_top\n"
        "walk_top:\n"
        "	add %rdx, %rax\n" /* 3 bytes: the run's first instruction */
        "walk_dec:\n"
        "	dec %rdx\n" /* 3 bytes: where the entry lands */
        "	jne walk_top\n"
        "	ret\n");

int main(int argc, char **argv) {
	long calls = argc > 1 ? atol(argv[1]) : 1000, n = argc > 2 ? atol(argv[2]) : 3;
	printf("walking\n");
	fflush(stdout);
	long total = 0;
	for (long i = 0; i < calls; i++)
		total += walk(n);
	printf("total %ld\n", total);
	return 0;
}
