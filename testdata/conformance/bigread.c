// Large transfers in one system call: 67 MiB and a bit of pseudo-random
// bytes (past the 64 MiB a recorder reads at once) written to a file and
// read back with one read(), 4 MiB with pread64() and
// with a preadv() over two halves, and 3 MiB of text written to stderr with
// one write(). Random bytes do not compress: a recorder that keeps only part
// of a large output (it once kept 1 MiB) replays other bytes and diverges.
// The bytes come from a generator in the program, not getrandom(), so that
// the recording holds the 67 MiB once.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define SIZE ((67 << 20) + 4096 * 3 + 8)
#define PART (4 << 20)

static unsigned long hash(const unsigned char *b, size_t n) {
	unsigned long h = 1469598103934665603UL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211UL;
	return h;
}

int main(void) {
	char path[] = "/tmp/rewind-bigread-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return 1;
	unlink(path);
	unsigned char *src = malloc(SIZE), *dst = malloc(SIZE);
	unsigned long x = 88172645463325252UL;
	for (size_t i = 0; i < SIZE; i += 8) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		memcpy(src + i, &x, 8);
	}
	if (write(fd, src, SIZE) != SIZE)
		return 3;
	unsigned long want = hash(src, SIZE);

	lseek(fd, 0, SEEK_SET);
	ssize_t n = read(fd, dst, SIZE);
	printf("read %zd bytes, %s\n", n, hash(dst, SIZE) == want ? "same" : "DIFFERENT");
	int bad = n != SIZE || hash(dst, SIZE) != want;

	unsigned long part = hash(src + PART, PART);
	memset(dst, 0, PART);
	n = pread(fd, dst, PART, PART);
	printf("pread %zd bytes, %s\n", n, hash(dst, PART) == part ? "same" : "DIFFERENT");
	bad |= n != PART || hash(dst, PART) != part;

	memset(dst, 0, PART);
	struct iovec iov[2] = {{dst, PART / 2}, {dst + PART / 2, PART / 2}};
	n = preadv(fd, iov, 2, PART);
	printf("preadv %zd bytes, %s\n", n, hash(dst, PART) == part ? "same" : "DIFFERENT");
	bad |= n != PART || hash(dst, PART) != part;

	// A big write to a standard stream: replay --check re-emits all of it.
	size_t tn = 3 << 20;
	char *text = malloc(tn);
	for (size_t i = 0; i < tn; i++)
		text[i] = (i % 64 == 63) ? '\n' : 'a' + (i / 64) % 26;
	bad |= write(2, text, tn) != (ssize_t)tn;

	printf("%s\n", bad ? "FAIL" : "OK");
	return bad;
}
