// stdwrites.c: N lines written one write each to the standard output, and
// every tenth to the standard error: the hook records writes to the streams
// rewind passed with their bytes (issue 23), and replay shows them in order.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 100;
	char line[64];
	for (int i = 1; i <= n; i++) {
		int len = snprintf(line, sizeof line, "line %d of %d\n", i, n);
		if (write(i % 10 == 0 ? 2 : 1, line, len) != len)
			return 1;
	}
	return 0;
}
