// A small service for the attach tests, started before rewind and never
// its child: with -d it forks and its parent exits, as a daemon does.
// It waits in poll() on two inputs: commands on stdin (a pipe) and
// clients on a loopback TCP socket, and allocates a record per command.
// A bug waits in it: "name S" copies S into a 16-byte field without a
// bound, and a longer name overwrites the balance that follows it.
// Commands (stdin or TCP, one per line):
//   add N    adds N to the balance (a malloc'd record of it is kept)
//   name S   sets the account name (the bug)
//   get      answers "balance B records R name S"
//   crash    writes through a null pointer
//   x        exits
// It prints "pid P port T" once ready.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct account {
	char name[16];
	long balance;
};

struct record {
	long amount;
	struct record *next;
};

static struct account acc = {"nobody", 0};
static struct record *records;
static long nrecords;

static void set_name(const char *s) {
	// The bug: no bound on the copy.
	for (size_t i = 0; s[i] && s[i] != '\n'; i++) {
		acc.name[i] = s[i];
		acc.name[i + 1] = 0;
	}
}

static void add(long n) {
	struct record *r = malloc(sizeof *r);
	r->amount = n;
	r->next = records;
	records = r;
	nrecords++;
	acc.balance += n;
}

// command runs one command line and writes its answer to out.
static int command(const char *line, FILE *out) {
	if (strncmp(line, "add ", 4) == 0) {
		add(atol(line + 4));
	} else if (strncmp(line, "name ", 5) == 0) {
		set_name(line + 5);
	} else if (strncmp(line, "get", 3) == 0) {
		fprintf(out, "balance %ld records %ld name %.16s\n", acc.balance, nrecords, acc.name);
		fflush(out);
	} else if (strncmp(line, "crash", 5) == 0) {
		*(volatile long *)(acc.balance & 0) = 1;
	} else if (line[0] == 'x') {
		return 1;
	}
	return 0;
}

int main(int argc, char **argv) {
	if (argc > 1 && strcmp(argv[1], "-d") == 0) {
		pid_t child = fork();
		if (child < 0)
			return 1;
		if (child > 0)
			return 0;
		setsid();
	}
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof sa;
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(ls, 8) < 0 ||
	    getsockname(ls, (struct sockaddr *)&sa, &len) < 0) {
		perror("listen");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	// Unbuffered: a line left in stdin's buffer would wait for poll().
	setvbuf(stdin, NULL, _IONBF, 0);
	printf("pid %d port %d\n", getpid(), ntohs(sa.sin_port));
	char line[256];
	for (;;) {
		struct pollfd fds[2] = {{.fd = 0, .events = POLLIN}, {.fd = ls, .events = POLLIN}};
		if (poll(fds, 2, -1) < 0)
			continue;
		if (fds[0].revents) {
			if (!fgets(line, sizeof line, stdin))
				return 0;
			if (command(line, stdout))
				return 0;
		}
		if (fds[1].revents & POLLIN) {
			int c = accept(ls, NULL, NULL);
			if (c < 0)
				continue;
			// One stream each way: a stream may not turn from reading
			// to writing without a seek, which a socket refuses.
			FILE *in = fdopen(c, "r"), *out = fdopen(dup(c), "w");
			while (fgets(line, sizeof line, in)) {
				if (command(line, out))
					break;
			}
			fclose(out);
			fclose(in);
		}
	}
}
