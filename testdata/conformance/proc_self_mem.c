// Writes into process memory that are system calls: pwrite, write (at the
// file position) and pwritev to /proc/self/mem, process_vm_writev to
// itself, then the same into a forked child waiting on a pipe, through
// /proc/PID/mem and process_vm_writev; reads back with pread and
// process_vm_readv. Replay emulates the calls: what they wrote must be
// written by replay too, into the right process.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long a = 1, b = 2, c = 3, d = 4, e = 5;

int main(void) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	int bad = 0;
	int fd = open("/proc/self/mem", O_RDWR);
	if (fd < 0)
		return 1;
	long v = 42;
	pwrite(fd, &v, sizeof v, (off_t)&a);
	v = 43;
	lseek(fd, (off_t)&b, SEEK_SET);
	write(fd, &v, sizeof v);
	long w[2] = {44, 0};
	struct iovec iov = {w, sizeof w[0]};
	pwritev(fd, &iov, 1, (off_t)&c);
	long r = 0;
	pread(fd, &r, sizeof r, (off_t)&a);
	v = 45;
	struct iovec local = {&v, sizeof v}, remote = {(void *)&d, sizeof d};
	process_vm_writev(getpid(), &local, 1, &remote, 1, 0);
	long got = 0;
	struct iovec lr = {&got, sizeof got}, rr = {(void *)&d, sizeof d};
	process_vm_readv(getpid(), &lr, 1, &rr, 1, 0);
	printf("self: a=%ld b=%ld c=%ld d=%ld read %ld %ld\n", a, b, c, d, r, got);
	bad |= a != 42 || b != 43 || c != 44 || d != 45 || r != 42 || got != 45;
	close(fd);

	int go[2];
	if (pipe(go))
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		char x;
		read(go[0], &x, 1); // the parent writes our memory meanwhile
		printf("child: a=%ld e=%ld\n", a, e);
		_exit(a == 100 && e == 101 ? 0 : 1);
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/mem", pid);
	fd = open(path, O_RDWR);
	v = 100;
	if (fd < 0 || pwrite(fd, &v, sizeof v, (off_t)&a) != sizeof v)
		bad = 1;
	v = 101;
	struct iovec cl = {&v, sizeof v}, cr = {(void *)&e, sizeof e};
	if (process_vm_writev(pid, &cl, 1, &cr, 1, 0) != sizeof v)
		bad = 1;
	write(go[1], "x", 1);
	int st;
	waitpid(pid, &st, 0);
	bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	printf("parent: a=%ld e=%ld\n", a, e);
	printf(bad ? "FAIL\n" : "OK\n");
	return bad;
}
