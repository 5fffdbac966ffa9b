// What the conformance programs that run a copy of themselves share: the
// copy of the running executable.
#include <fcntl.h>
#include <unistd.h>

// copy_self writes the running executable (/proc/self/exe) to the file
// open on to; it returns 0, or -1 where a read or a write failed.
static int copy_self(int to) {
	int from = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (from < 0)
		return -1;
	char buf[65536];
	ssize_t n;
	while ((n = read(from, buf, sizeof buf)) > 0)
		if (write(to, buf, n) != n)
			break;
	close(from);
	return n == 0 ? 0 : -1;
}
