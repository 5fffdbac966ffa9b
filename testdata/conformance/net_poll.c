// Sockets and readiness: a UDP exchange over loopback (an ephemeral port
// learned with getsockname), a TCP connection accepted on loopback with
// data both ways, a socketpair with sendmsg/recvmsg of two iovecs, and the
// readiness calls on them: poll, ppoll, select, pselect6, epoll_wait and
// epoll_pwait, an eventfd, a timerfd that expires, and a pipe2 with
// O_NONBLOCK that fails with EAGAIN when empty.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

static struct sockaddr_in loopback(void) {
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static void udp(void) {
	int s = socket(AF_INET, SOCK_DGRAM, 0), c = socket(AF_INET, SOCK_DGRAM, 0);
	assert(s >= 0 && c >= 0);
	struct sockaddr_in a = loopback();
	assert(bind(s, (struct sockaddr *)&a, sizeof a) == 0);
	socklen_t n = sizeof a;
	assert(getsockname(s, (struct sockaddr *)&a, &n) == 0 && a.sin_port != 0);
	assert(sendto(c, "datagram", 8, 0, (struct sockaddr *)&a, sizeof a) == 8);
	struct pollfd p = {.fd = s, .events = POLLIN};
	assert(poll(&p, 1, 5000) == 1 && (p.revents & POLLIN));
	char buf[32] = {0};
	struct sockaddr_in from;
	socklen_t fn = sizeof from;
	ssize_t r = recvfrom(s, buf, sizeof buf, 0, (struct sockaddr *)&from, &fn);
	assert(r == 8 && from.sin_addr.s_addr == htonl(INADDR_LOOPBACK));
	printf("udp: %.*s from loopback\n", (int)r, buf);
	close(s), close(c);
}

static void tcp(void) {
	int l = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in a = loopback();
	assert(bind(l, (struct sockaddr *)&a, sizeof a) == 0 && listen(l, 1) == 0);
	socklen_t n = sizeof a;
	assert(getsockname(l, (struct sockaddr *)&a, &n) == 0);
	int c = socket(AF_INET, SOCK_STREAM, 0);
	assert(connect(c, (struct sockaddr *)&a, sizeof a) == 0);
	fd_set rd;
	FD_ZERO(&rd);
	FD_SET(l, &rd);
	struct timeval tv = {5, 0};
	assert(select(l + 1, &rd, NULL, NULL, &tv) == 1 && FD_ISSET(l, &rd));
	int s = accept(l, NULL, NULL);
	assert(s >= 0);
	assert(write(c, "ping", 4) == 4);
	char buf[16] = {0};
	FD_ZERO(&rd);
	FD_SET(s, &rd);
	struct timespec ts = {5, 0};
	assert(pselect(s + 1, &rd, NULL, NULL, &ts, NULL) == 1);
	assert(read(s, buf, sizeof buf) == 4);
	assert(send(s, "pong", 4, 0) == 4);
	assert(recv(c, buf + 4, 4, MSG_WAITALL) == 4);
	printf("tcp: %s\n", buf);
	shutdown(c, SHUT_WR);
	assert(read(s, buf, sizeof buf) == 0);
	close(s), close(c), close(l);
}

static void pair_and_epoll(void) {
	int sv[2];
	assert(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) == 0);
	char a[] = "two ", b[] = "iovecs";
	struct iovec out[2] = {{a, 4}, {b, 6}};
	struct msghdr m = {.msg_iov = out, .msg_iovlen = 2};
	assert(sendmsg(sv[0], &m, 0) == 10);

	int ep = epoll_create1(EPOLL_CLOEXEC);
	int ev = eventfd(0, EFD_NONBLOCK);
	int tf = timerfd_create(CLOCK_MONOTONIC, 0);
	struct itimerspec its = {.it_value = {0, 2000000}};
	assert(timerfd_settime(tf, 0, &its, NULL) == 0);
	struct epoll_event e = {.events = EPOLLIN};
	e.data.u32 = 1, epoll_ctl(ep, EPOLL_CTL_ADD, sv[1], &e);
	e.data.u32 = 2, epoll_ctl(ep, EPOLL_CTL_ADD, ev, &e);
	e.data.u32 = 3, epoll_ctl(ep, EPOLL_CTL_ADD, tf, &e);
	assert(eventfd_write(ev, 7) == 0);

	int seen = 0;
	while (seen != 7) {
		struct epoll_event got[4];
		sigset_t none;
		sigemptyset(&none);
		int k = seen & 1 ? epoll_pwait(ep, got, 4, 5000, &none) : epoll_wait(ep, got, 4, 5000);
		assert(k > 0);
		for (int i = 0; i < k; i++) {
			uint32_t id = got[i].data.u32;
			if (id == 1) {
				char in1[5] = {0}, in2[16] = {0};
				struct iovec iv[2] = {{in1, 4}, {in2, sizeof in2 - 1}};
				struct msghdr r = {.msg_iov = iv, .msg_iovlen = 2};
				assert(recvmsg(sv[1], &r, 0) == 10);
				printf("socketpair: %s%s\n", in1, in2);
			} else if (id == 2) {
				eventfd_t v;
				assert(eventfd_read(ev, &v) == 0);
				printf("eventfd: %llu\n", (unsigned long long)v);
			} else {
				uint64_t expirations;
				assert(read(tf, &expirations, 8) == 8 && expirations >= 1);
				printf("timerfd: expired\n");
			}
			seen |= 1 << (id - 1);
		}
	}
	struct pollfd p[2] = {{.fd = ev, .events = POLLIN}, {.fd = sv[0], .events = POLLOUT}};
	struct timespec zero = {0, 0};
	assert(ppoll(p, 2, &zero, NULL) == 1 && p[1].revents == POLLOUT);
	close(ep), close(ev), close(tf), close(sv[0]), close(sv[1]);
}

static void nonblocking_pipe(void) {
	int fd[2];
	assert(pipe2(fd, O_NONBLOCK | O_CLOEXEC) == 0);
	char c;
	assert(read(fd[0], &c, 1) == -1 && errno == EAGAIN);
	printf("pipe2: empty read fails with EAGAIN\n");
	close(fd[0]), close(fd[1]);
}

int main(void) {
	setvbuf(stdout, NULL, _IONBF, 0);
	udp();
	tcp();
	pair_and_epoll();
	nonblocking_pipe();
	printf("OK\n");
	return 0;
}
