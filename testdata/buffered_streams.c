// buffered_streams.c: a parent and its child pass numbers over two pipes
// and a socket pair, N rounds: the small writes and sends, and the reads
// and receives that find data there, are the hook's to record; a read
// that must wait for the other side is made traced. Then reads of an
// empty non-blocking pipe (EAGAIN, recorded as such) and of a pipe whose
// writer is gone (end of file).
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 200;
	int down[2], up[2], sv[2];
	if (pipe(down) || pipe(up) || socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		perror("pipe");
		return 1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(down[1]), close(up[0]), close(sv[0]);
		int v;
		while (read(down[0], &v, sizeof v) == sizeof v) {
			v *= 2;
			write(up[1], &v, sizeof v);
			v += 1;
			send(sv[1], &v, sizeof v, 0);
		}
		_exit(0);
	}
	close(down[0]), close(up[1]), close(sv[1]);
	long sum = 0;
	for (int i = 0; i < n; i++) {
		int a, b;
		write(down[1], &i, sizeof i);
		if (read(up[0], &a, sizeof a) != sizeof a || recv(sv[0], &b, sizeof b, 0) != sizeof b) {
			fprintf(stderr, "short read at %d\n", i);
			return 1;
		}
		sum += a + b;
	}
	close(down[1]);
	int st;
	waitpid(pid, &st, 0);
	char c;
	long end = read(up[0], &c, 1);
	int empty[2];
	pipe(empty);
	fcntl(empty[0], F_SETFL, O_NONBLOCK);
	int eagain = 0;
	for (int i = 0; i < 100; i++)
		eagain += read(empty[0], &c, 1) < 0 && errno == EAGAIN;
	printf("sum %ld, end %ld, eagain %d\n", sum, end, eagain);
	return 0;
}
