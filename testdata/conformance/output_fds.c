// Standard streams through other descriptors: writes that reach stdout or
// stderr through dup, dup2, dup3, F_DUPFD, F_DUPFD_CLOEXEC, /proc/self/fd/1
// opened again, a descriptor received over a unix socket (SCM_RIGHTS) or
// taken with pidfd_getfd, writev, sendfile and splice from a file must all
// be re-emitted by replay; writes to a file put in their place with dup2 or
// after close(1) must not.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static void say(int fd, const char *s) {
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		exit(1);
}

static int received(void) {
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return -1;
	char byte = 'x';
	struct iovec iov = {&byte, 1};
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	memset(&ctl, 0, sizeof ctl);
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	int one = 1;
	memcpy(CMSG_DATA(c), &one, sizeof one);
	if (sendmsg(sv[0], &msg, 0) != 1)
		return -1;
	memset(&ctl, 0, sizeof ctl);
	msg.msg_controllen = sizeof ctl.buf;
	if (recvmsg(sv[1], &msg, 0) != 1)
		return -1;
	int fd;
	memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&msg)), sizeof fd);
	close(sv[0]);
	close(sv[1]);
	return fd;
}

int main(void) {
	char dir[] = "/tmp/rewind-conf-XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	char path[64];
	snprintf(path, sizeof path, "%s/f", dir);

	int d = dup(1);
	say(d, "via dup\n");
	say(dup2(1, 10), "via dup2\n");
	say(dup3(2, 11, O_CLOEXEC), "stderr via dup3\n");
	say(fcntl(1, F_DUPFD, 20), "via F_DUPFD\n");
	say(fcntl(2, F_DUPFD_CLOEXEC, 30), "stderr via F_DUPFD_CLOEXEC\n");
	int again = open("/proc/self/fd/1", O_WRONLY);
	if (again >= 0)
		say(again, "via /proc/self/fd/1\n");
	int r = received();
	if (r >= 0)
		say(r, "via SCM_RIGHTS\n");
	int pidfd = syscall(SYS_pidfd_open, getpid(), 0);
	int got = pidfd >= 0 ? syscall(SYS_pidfd_getfd, pidfd, 1, 0) : -1;
	if (got >= 0)
		say(got, "via pidfd_getfd\n");
	struct iovec iov[2] = {{"via ", 4}, {"writev\n", 7}};
	writev(d, iov, 2);

	// sendfile and splice from a file into a copy of stdout.
	int f = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
	say(f, "from a file with sendfile\nfrom a file with splice\n");
	off_t off = 0;
	sendfile(d, f, &off, 26);
	lseek(f, 26, SEEK_SET);
	splice(f, NULL, d, NULL, 24, 0);

	// stdout replaced by the file, then given back.
	int save = dup(1);
	dup2(f, 1);
	say(1, "to the file, not to stdout\n");
	dup2(save, 1);
	close(save);
	say(1, "stdout is back\n");
	close(1);
	if (open(path, O_WRONLY | O_APPEND) != 1) // takes descriptor 1
		return 1;
	say(1, "to the file again\n");
	dup2(d, 1);

	char buf[256] = {0};
	ssize_t n = pread(f, buf, sizeof buf - 1, 0);
	printf("the file holds %zd bytes:\n%s", n, buf);
	unlink(path);
	rmdir(dir);
	printf("OK\n");
	return 0;
}
