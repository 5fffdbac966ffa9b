// sharedloop: computes between system calls while its memory shared with
// the kernel changes: a memfd mapped twice and written with pwrite, and
// anonymous memory marked MADV_WIPEONFORK and MADV_DONTFORK (which the
// replay's checkpoints, clones of the process, must still see). Arguments:
// iterations, work per iteration, pages of the memfd.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv) {
	long calls = argc > 1 ? atol(argv[1]) : 2000;
	long work = argc > 2 ? atol(argv[2]) : 200000;
	long pages = argc > 3 ? atol(argv[3]) : 4;
	size_t size = pages * 4096;
	int fd = memfd_create("sharedloop", 0);
	if (fd < 0 || ftruncate(fd, size) != 0)
		return 1;
	unsigned long *a = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	unsigned long *b = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	unsigned long *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned long *d = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED || b == MAP_FAILED || w == MAP_FAILED || d == MAP_FAILED)
		return 1;
	if (madvise(w, 4096, MADV_WIPEONFORK) != 0 || madvise(d, 4096, MADV_DONTFORK) != 0)
		return 1;
	size_t words = size / sizeof *a;
	unsigned long x = 88172645463325252UL, sum = 0;
	for (long i = 0; i < calls; i++) {
		for (long j = 0; j < work; j++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		a[x % words] += i;
		w[i % 512] += x;
		d[i % 512] ^= x;
		unsigned long v = x;
		if (pwrite(fd, &v, sizeof v, (i * 8) % size) != sizeof v)
			return 1;
		sum += b[x % words] + b[(i * 8) % size / 8] + w[(i + 1) % 512] + d[(i + 2) % 512] + (getppid() & 1);
	}
	printf("%lu\n", sum);
	return 0;
}
