// Steps out of functions into the middle of the caller's line. gdb stops
// there only where the return address starts a row of the line table (after
// h, whose result is added next); elsewhere it steps on with the caller's
// line: into the next call of the line (from g to h), or to the next line
// (from work to the loop's increment). Backwards, the same stops in reverse.
int g(int x) { return x * 2; }
int h(int x) { return x + 1; }

__attribute__((noinline)) int work(int a) {
	int s = 0;
	for (int i = 0; i < a; i++)
		s += i;
	return s;
}

int main(void) {
	int a = 3;
	int t = g(a) + h(a);
	long total = 0;
	for (int k = 1; k <= 3; k++)
		total += work(k);
	return (int)(total + t) & 1;
}
