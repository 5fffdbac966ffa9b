// pingpong.c: two processes exchange 4 bytes over loopback TCP N times
// (default 5000): each message wakes the other side blocked in read, so
// the recorder must switch processes at the cost of a system call, not at
// the end of a time slice (BenchmarkPingPong).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 5000;
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  bind(ls, (struct sockaddr *)&a, sizeof a);
  socklen_t l = sizeof a;
  getsockname(ls, (struct sockaddr *)&a, &l);
  listen(ls, 1);
  pid_t p = fork();
  if (p == 0) {
    int c = socket(AF_INET, SOCK_STREAM, 0);
    connect(c, (struct sockaddr *)&a, sizeof a);
    int one = 1; setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char b[4];
    for (int i = 0; i < n; i++) { write(c, "ping", 4); read(c, b, 4); }
    return 0;
  }
  int s = accept(ls, 0, 0);
  int one = 1; setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  char b[4];
  for (int i = 0; i < n; i++) { read(s, b, 4); write(s, "pong", 4); }
  waitpid(p, 0, 0);
  puts("done");
  return 0;
}
