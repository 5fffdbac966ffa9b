// madvise: MADV_DONTNEED on private anonymous memory (it reads back zero)
// and on a private file mapping (it reads back the file), MADV_FREE,
// MADV_REMOVE on shared memory (zero, in the file too), MADV_WIPEONFORK and
// MADV_DONTFORK as a forked child sees them, and the harmless hints.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define P 4096

int main(void) {
	char *a = mmap(NULL, 4 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(a != MAP_FAILED);
	memset(a, 'x', 4 * P);
	CHECK(madvise(a + P, 2 * P, MADV_DONTNEED) == 0);
	printf("anon dontneed: %c %d %d %c\n", a[0], a[P], a[2 * P], a[3 * P]);
	CHECK(a[P] == 0 && a[3 * P] == 'x');

	char path[] = "/tmp/rewind-madvise-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	unlink(path);
	char content[2 * P];
	memset(content, 'F', sizeof content);
	CHECK(write(fd, content, sizeof content) == sizeof content);
	char *f = mmap(NULL, 2 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	CHECK(f != MAP_FAILED);
	f[0] = 'w';
	f[P] = 'w';
	CHECK(madvise(f, P, MADV_DONTNEED) == 0);
	printf("file dontneed: %c %c\n", f[0], f[P]);
	CHECK(f[0] == 'F' && f[P] == 'w');

	// MADV_FREE: the pages keep their content or read zero until written;
	// written again, they hold what was written.
	char *fr = mmap(NULL, 2 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(fr != MAP_FAILED);
	memset(fr, 'y', 2 * P);
	CHECK(madvise(fr, 2 * P, MADV_FREE) == 0);
	fr[0] = 'z';
	printf("free: %c %s\n", fr[0], fr[P] == 'y' || fr[P] == 0 ? "kept or zero" : "other");

	// MADV_REMOVE punches a hole in shared memory: it reads zero in every
	// mapping of it and through the file.
	int mfd = memfd_create("rewind-madvise", 0);
	CHECK(mfd >= 0);
	CHECK(ftruncate(mfd, 2 * P) == 0);
	char *s = mmap(NULL, 2 * P, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	char *s2 = mmap(NULL, 2 * P, PROT_READ, MAP_SHARED, mfd, 0);
	CHECK(s != MAP_FAILED && s2 != MAP_FAILED);
	memset(s, 's', 2 * P);
	CHECK(madvise(s + P, P, MADV_REMOVE) == 0);
	char c = 1;
	CHECK(pread(mfd, &c, 1, P) == 1);
	printf("remove: %c %d %d %d\n", s2[0], s2[P], s[P], c);
	CHECK(s2[P] == 0 && c == 0);
	char *sa = mmap(NULL, P, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sa != MAP_FAILED);
	sa[5] = 'q';
	CHECK(madvise(sa, P, MADV_REMOVE) == 0);
	printf("remove anon: %d\n", sa[5]);

	// A forked child sees MADV_WIPEONFORK memory as zero and does not have
	// MADV_DONTFORK memory at all.
	char *w = mmap(NULL, P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *d = mmap(NULL, P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(w != MAP_FAILED && d != MAP_FAILED);
	strcpy(w, "wipe");
	strcpy(d, "dontfork");
	CHECK(madvise(w, P, MADV_WIPEONFORK) == 0);
	CHECK(madvise(d, P, MADV_DONTFORK) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		int code = w[0] == 0 ? 10 : 20;
		if (msync(d, P, MS_ASYNC) == 0)
			code += 1; // mapped in the child: wrong
		_exit(code);
	}
	int st;
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
	printf("child: %d, parent: %s %s\n", WEXITSTATUS(st), w, d);
	CHECK(WEXITSTATUS(st) == 10);
	CHECK(madvise(w, P, MADV_KEEPONFORK) == 0);
	CHECK(madvise(d, P, MADV_DOFORK) == 0);

	// Hints that change nothing a program can see.
	int hints[] = {MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL, MADV_WILLNEED, MADV_DONTDUMP,
	               MADV_DODUMP, MADV_HUGEPAGE, MADV_NOHUGEPAGE, MADV_COLD, MADV_PAGEOUT};
	for (unsigned i = 0; i < sizeof hints / sizeof hints[0]; i++) {
		int r = madvise(a, 4 * P, hints[i]);
		printf("hint %d: %d\n", hints[i], r);
	}
	printf("after hints: %c %d\n", a[0], a[P]);
	printf("OK\n");
	return 0;
}
