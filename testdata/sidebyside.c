// Two processes that share nothing but descriptors, as rewind records them
// side by side (engine/record/sidebyside.go):
//   pingpong N  parent and child exchange N messages over a socketpair, each
//               waiting in read for the other; both print to stdout.
//   poll N      the same, each waiting in poll (the child) or epoll_wait (the
//               parent) before it reads.
//   signal      the child waits in read of a pipe (after a first read that
//               got a byte); the parent interrupts it with SIGUSR1 (no
//               SA_RESTART), then writes.
//   kill        the child waits in read of a pipe; the parent kills it.
//   race N      parent and child each write N lines to stdout at once.
//   epipe       the child writes into a pipe until the parent, which read
//               one chunk, closes it: SIGPIPE kills the child, as without
//               rewind (not a write failing with EPIPE).
//   bulk N      the child writes N chunks of 16 KiB into a pipe, which holds
//               64 KiB: its writes wait for the parent's reads.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static void say(const char *fmt, int a, int b) {
	char line[64];
	int n = snprintf(line, sizeof line, fmt, a, b);
	if (write(1, line, n) != n)
		exit(3);
}

// reap waits for the child p and says how it ended: its exit status (-1
// if killed) and the signal that killed it (0 if none).
static void reap(pid_t p) {
	int st;
	waitpid(p, &st, 0);
	say("parent: child exited %d, signal %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

// pipe_child makes a pipe fd and forks a child that keeps only its write
// end while the parent keeps only its read end; it returns what fork did
// (0 in the child), and exits 1 where there is no pipe.
static pid_t pipe_child(int fd[2]) {
	if (pipe(fd) != 0)
		exit(1);
	pid_t p = fork();
	close(fd[p == 0 ? 0 : 1]);
	return p;
}

static volatile sig_atomic_t seen;
static void onusr1(int sig) { seen = sig; }

// waitin waits until fd can be read: with poll, or with epoll_wait on ep.
static void waitin(int fd, int ep) {
	if (ep < 0) {
		struct pollfd p = {fd, POLLIN, 0};
		if (poll(&p, 1, -1) != 1 || !(p.revents & POLLIN))
			exit(4);
		return;
	}
	struct epoll_event e;
	if (epoll_wait(ep, &e, 1, -1) != 1 || e.data.fd != fd)
		exit(5);
}

int main(int argc, char **argv) {
	const char *mode = argc > 1 ? argv[1] : "pingpong";
	int n = argc > 2 ? atoi(argv[2]) : 100;
	int polls = strcmp(mode, "poll") == 0;
	if (strcmp(mode, "pingpong") == 0 || polls) {
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
			return 1;
		pid_t p = fork();
		if (p == 0) {
			int v = 0;
			for (int i = 0; i < n; i++) {
				v++;
				if (write(sv[1], &v, sizeof v) != sizeof v)
					return 2;
				if (polls)
					waitin(sv[1], -1);
				if (read(sv[1], &v, sizeof v) != sizeof v)
					return 2;
				say("child %d got %d\n", i, v);
			}
			return 0;
		}
		int v, sum = 0, ep = -1;
		if (polls) {
			struct epoll_event e = {.events = EPOLLIN, .data.fd = sv[0]};
			ep = epoll_create1(0);
			if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &e) != 0)
				return 1;
		}
		for (int i = 0; i < n; i++) {
			if (polls)
				waitin(sv[0], ep);
			if (read(sv[0], &v, sizeof v) != sizeof v)
				return 2;
			sum += v;
			say("parent %d got %d\n", i, v);
			v = v * 2 % 1000003;
			if (write(sv[0], &v, sizeof v) != sizeof v)
				return 2;
		}
		int st;
		waitpid(p, &st, 0);
		say("sum %d, child status %d\n", sum, st);
		return 0;
	}
	if (strcmp(mode, "signal") == 0 || strcmp(mode, "kill") == 0) {
		int fd[2];
		if (pipe(fd) != 0)
			return 1;
		pid_t p = fork();
		if (p == 0) {
			struct sigaction sa;
			memset(&sa, 0, sizeof sa);
			sa.sa_handler = onusr1; // no SA_RESTART: the read fails with EINTR
			sigaction(SIGUSR1, &sa, 0);
			char c;
			for (;;) { // one site: the first read patches it, the next waits in the hook
				ssize_t r = read(fd[0], &c, 1);
				if (r == 1 && c == 'x')
					break;
				if (r < 0 && errno != EINTR)
					return 2;
			}
			say("child: signal %d, read %d\n", seen, c);
			return 0;
		}
		if (write(fd[1], "a", 1) != 1)
			return 2;
		usleep(100000); // the child waits in its read by now
		kill(p, strcmp(mode, "kill") == 0 ? SIGTERM : SIGUSR1);
		usleep(20000);
		if (write(fd[1], "x", 1) != 1)
			return 2;
		reap(p);
		return 0;
	}
	if (strcmp(mode, "epipe") == 0) {
		int fd[2];
		static char buf[16384];
		pid_t p = pipe_child(fd);
		if (p == 0) {
			for (;;)
				if (write(fd[1], buf, sizeof buf) < 0)
					_exit(2); // EPIPE: what a SIGPIPE lost to rewind shows
		}
		if (read(fd[0], buf, sizeof buf) <= 0)
			return 2;
		close(fd[0]);
		reap(p);
		return 0;
	}
	if (strcmp(mode, "bulk") == 0) {
		int fd[2];
		static char buf[16384];
		pid_t p = pipe_child(fd);
		if (p == 0) {
			for (int i = 0; i < n; i++) {
				memset(buf, 'a' + i % 26, sizeof buf);
				if (write(fd[1], buf, sizeof buf) != sizeof buf)
					return 2;
			}
			return 0;
		}
		long total = 0, sum = 0;
		ssize_t r;
		while ((r = read(fd[0], buf, sizeof buf)) > 0) {
			total += r;
			for (ssize_t i = 0; i < r; i++)
				sum += buf[i];
		}
		int st;
		waitpid(p, &st, 0);
		say("bulk %d bytes, sum %d\n", (int)total, (int)sum);
		return 0;
	}
	if (strcmp(mode, "race") == 0) {
		pid_t p = fork();
		for (int i = 0; i < n; i++)
			say(p == 0 ? "child line %d of %d\n" : "parent line %d of %d\n", i, n);
		if (p == 0)
			return 0;
		waitpid(p, 0, 0);
		return 0;
	}
	return 1;
}
