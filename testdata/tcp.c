// tcp.c: sockets between threads. A server thread listens on 127.0.0.1 port 0
// (kernel-chosen port, found with getsockname), main connects, sends a
// message with a random number, the server echoes it uppercased and main
// prints the reply. Exercises socket/bind/listen/accept/connect/send/recv,
// blocking calls while another thread runs, and a random port.
#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

static int lfd;

static void *server(void *arg) {
	(void)arg;
	int c = accept(lfd, NULL, NULL);
	if (c < 0) {
		perror("accept");
		return NULL;
	}
	char buf[256];
	ssize_t n = recv(c, buf, sizeof buf, 0);
	for (ssize_t i = 0; i < n; i++)
		buf[i] = (char)toupper((unsigned char)buf[i]);
	if (n > 0)
		send(c, buf, (size_t)n, 0);
	close(c);
	return NULL;
}

int main(void) {
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in addr;
	memset(&addr, 0, sizeof addr);
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr.sin_port = 0;
	if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(lfd, 1) < 0) {
		perror("bind/listen");
		return 1;
	}
	socklen_t len = sizeof addr;
	getsockname(lfd, (struct sockaddr *)&addr, &len);
	printf("port: %d\n", ntohs(addr.sin_port));

	pthread_t th;
	pthread_create(&th, NULL, server, NULL);

	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
		perror("connect");
		return 1;
	}
	unsigned int r = 0;
	getrandom(&r, sizeof r, 0);
	char msg[64];
	int mlen = snprintf(msg, sizeof msg, "hello server %u", r);
	send(fd, msg, (size_t)mlen, 0);
	char reply[256];
	ssize_t n = 0, k;
	while ((k = recv(fd, reply + n, sizeof reply - 1 - (size_t)n, 0)) > 0)
		n += k;
	reply[n] = '\0';
	close(fd);
	pthread_join(th, NULL);
	close(lfd);
	printf("reply: %s\n", reply);
	return 0;
}
