// The symmetry check's program (e2e/symmetry_test.go): recursion, a loop of
// calls and a global written at every level, so that finish and
// reverse-finish, continue and reverse-continue with breakpoints and
// watchpoints have many stops to retrace. -DROUNDS=N for a longer run.
#ifndef ROUNDS
#define ROUNDS 40
#endif
long total;

__attribute__((noinline)) int depth(int n) {
	if (n == 0) {
		total += 1;
		return 0;
	}
	int r = depth(n - 1);
	total += r;
	return r * 3 + n;
}

int main(int argc, char **argv) {
	for (int k = 0; k < ROUNDS; k++)
		total += depth(k % 6 + argc);
	return (int)(total & 1);
}
