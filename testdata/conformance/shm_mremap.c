// mremap of every kind on private and shared mappings: growing in place and
// with MREMAP_MAYMOVE, shrinking, moving to a chosen address (MREMAP_FIXED),
// MREMAP_DONTUNMAP (the old range stays mapped and reads zero), an alias
// made with old_size 0, on anonymous, memfd and file mappings.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"

#define P 4096

int main(void) {
	// Private anonymous: grow (may move), shrink, move to a fixed place.
	char *p = mmap(NULL, 2 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	strcpy(p, "private");
	p[P + 1] = 'p';
	char *q = mremap(p, 2 * P, 64 * P, MREMAP_MAYMOVE);
	CHECK(q != MAP_FAILED);
	q[63 * P] = 'e';
	printf("grown: %s %c %c\n", q, q[P + 1], q[63 * P]);
	CHECK(mremap(q, 64 * P, P, 0) == q);
	char *dst = mmap(NULL, 16 * P, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(dst != MAP_FAILED);
	char *moved = mremap(q, P, P, MREMAP_MAYMOVE | MREMAP_FIXED, dst + 2 * P);
	CHECK(moved == dst + 2 * P);
	printf("moved: %s\n", moved);

	// MREMAP_DONTUNMAP: the pages move, the old range stays and reads zero.
	// (Some kernels refuse it without MREMAP_FIXED: EINVAL.)
	char *old = mremap(moved, P, P, MREMAP_MAYMOVE | MREMAP_DONTUNMAP | MREMAP_FIXED, dst + 6 * P);
	CHECK(old == dst + 6 * P);
	printf("dontunmap: new %s, old %d\n", old, moved[0]);
	CHECK(moved[0] == 0 && strcmp(old, "private") == 0);
	moved[1] = 'm';
	char *again = mremap(moved, P, P, MREMAP_MAYMOVE | MREMAP_DONTUNMAP);
	printf("dontunmap without a fixed address: %s\n", again == MAP_FAILED ? "refused" : again[1] == 'm' && moved[1] == 0 ? "moved" : "wrong");

	// Shared anonymous: an alias made with old_size 0 sees the same pages.
	char *s = mmap(NULL, 4 * P, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(s != MAP_FAILED);
	char *alias = mremap(s, 0, 4 * P, MREMAP_MAYMOVE);
	CHECK(alias != MAP_FAILED && alias != s);
	strcpy(s + P, "shared anon");
	printf("alias: %s\n", alias + P);
	CHECK(strcmp(alias + P, "shared anon") == 0);
	char *s2 = mremap(s, 4 * P, 2 * P, 0);
	CHECK(s2 == s);
	char *s3 = mremap(alias, 4 * P, 4 * P, MREMAP_MAYMOVE | MREMAP_FIXED, dst + 8 * P);
	CHECK(s3 == dst + 8 * P);
	strcpy(s3 + 2 * P, "moved alias");
	printf("moved alias: %s %s\n", s3 + P, s3 + 2 * P);

	// A memfd mapping grown with MREMAP_MAYMOVE keeps seeing the file.
	int fd = memfd_create("rewind-mremap", 0);
	CHECK(fd >= 0);
	CHECK(ftruncate(fd, 8 * P) == 0);
	char *f = mmap(NULL, 2 * P, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(f != MAP_FAILED);
	CHECK(pwrite(fd, "page five", 9, 5 * P) == 9);
	char *g = mremap(f, 2 * P, 8 * P, MREMAP_MAYMOVE);
	CHECK(g != MAP_FAILED);
	printf("memfd grown: %s\n", g + 5 * P);
	CHECK(strcmp(g + 5 * P, "page five") == 0);
	strcpy(g + 7 * P, "end");
	char buf[8] = {0};
	CHECK(pread(fd, buf, 3, 7 * P) == 3);
	printf("memfd pread: %s\n", buf);

	// A private file mapping grown in place reads the rest of the file.
	char path[] = "/tmp/rewind-mremap-XXXXXX";
	int tf = mkstemp(path);
	CHECK(tf >= 0);
	unlink(path);
	char content[3 * P];
	for (int i = 0; i < 3 * P; i++)
		content[i] = 'A' + i / P;
	CHECK(write(tf, content, sizeof content) == sizeof content);
	char *h = mmap(NULL, P, PROT_READ, MAP_PRIVATE, tf, 0);
	CHECK(h != MAP_FAILED);
	char *h2 = mremap(h, P, 3 * P, MREMAP_MAYMOVE);
	CHECK(h2 != MAP_FAILED);
	printf("file grown: %c %c %c\n", h2[0], h2[P], h2[2 * P]);
	CHECK(h2[2 * P] == 'C');
	printf("OK\n");
	return 0;
}
