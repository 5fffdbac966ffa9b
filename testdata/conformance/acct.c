// acct by its results: the failures (a missing directory: ENOENT, a
// directory: EISDIR, a bad pointer: EFAULT; EPERM without privilege). A
// successful acct switches accounting on for the whole PID namespace, which
// a test must not do to the machine.
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int bad;

static void try(const char *what, const char *path, int want, int alt) {
	errno = 0;
	int r = acct(path);
	printf("%s: %d %s\n", what, r, strerror(errno));
	if (r != -1 || (errno != want && errno != alt && errno != EPERM))
		bad = 1;
}

int main(void) {
	try("missing directory", "/nonexistent-rewind-dir/acct", ENOENT, ENOENT);
	try("a directory", "/tmp", EISDIR, EACCES);
	try("bad pointer", (const char *)8, EFAULT, EFAULT);
	if (bad)
		return 1;
	printf("OK\n");
	return 0;
}
