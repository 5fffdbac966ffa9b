// What the ptrace_sigchld_*.c conformance programs share: a tracer's
// SIGCHLD handler that wakes its event loop through a pipe, as gdb's does.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

// sigpipe: the handler writes to [1], the event loop polls [0].
static int sigpipe[2];

static void onChild(int sig) {
	(void)sig;
	int e = errno;
	if (write(sigpipe[1], "c", 1) < 0) {
		// Full: a wake-up is pending already.
	}
	errno = e;
}

// watchChildren makes the pipe (non-blocking) and installs the handler;
// it says whether all went so.
static int watchChildren(void) {
	if (pipe2(sigpipe, O_NONBLOCK | O_CLOEXEC) != 0)
		return 0;
	struct sigaction sa = {.sa_handler = onChild, .sa_flags = SA_RESTART};
	return sigaction(SIGCHLD, &sa, NULL) == 0;
}
