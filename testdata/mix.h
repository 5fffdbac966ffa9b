// mix.h: the checksum buffered_files.c and buffered_writes.c print, so
// that an answer a replay got wrong shows in their output.
#include <stddef.h>

// sum is the checksum of all that mix was given.
static unsigned long sum;

// mix adds n bytes at p to sum.
static void mix(const void *p, size_t n) {
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		sum = sum * 31 + b[i];
}
