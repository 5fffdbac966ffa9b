/* Values computed from random data: a debugger printing them at the
 * breakpoint must agree with what the program printed. */
#include <stdint.h>
#include <stdio.h>
#include <sys/random.h>

struct stats {
	uint64_t digest;
	int min, max;
	double mean;
	unsigned char first[4];
	const char *label;
};

static uint64_t fnv(const unsigned char *p, int n)
{
	uint64_t h = 1469598103934665603ULL;
	for (int i = 0; i < n; i++) {
		h ^= p[i];
		h *= 1099511628211ULL;
	}
	return h;
}

int main(void)
{
	unsigned char buf[64];
	struct stats s = { .label = "random" };
	if (getrandom(buf, sizeof buf, 0) != sizeof buf)
		return 1;
	s.digest = fnv(buf, sizeof buf);
	s.min = 255;
	s.max = 0;
	long total = 0;
	for (int i = 0; i < (int)sizeof buf; i++) {
		if (buf[i] < s.min)
			s.min = buf[i];
		if (buf[i] > s.max)
			s.max = buf[i];
		total += buf[i];
	}
	s.mean = total / 64.0;
	for (int i = 0; i < 4; i++)
		s.first[i] = buf[i];
	printf("digest %lu min %d max %d total %ld first %d\n", (unsigned long)s.digest, s.min, s.max, total, s.first[0]);
	return 0;
}
