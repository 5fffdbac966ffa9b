// An executable that exists only in a private mount namespace: the program
// unshares a mount namespace, mounts a tmpfs on /usr/local (there only: a
// system directory, whose files replay expects on the machine), copies
// itself there and a child execs the copy (which says where it runs from
// and exits with a status). The copy is gone with the namespace when the
// recording ends: replay must take it from the recording. Without the
// privilege, a user namespace is tried, then the program says so and passes.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "copyself.h"

int main(int argc, char **argv) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && strcmp(argv[1], "inner") == 0) {
		const char *base = strrchr(argv[0], '/');
		printf("inner: running %s from the tmpfs\n", base ? base + 1 : argv[0]);
		return 3;
	}
	const char *dir = "/usr/local";
	struct stat st;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		printf("no %s here\nOK\n", dir);
		return 0;
	}
	if (unshare(CLONE_NEWNS) != 0 && (errno != EPERM || unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)) {
		printf("no mount namespace here: %s\nOK\n", strerror(errno));
		return 0;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 || mount("rewind", dir, "tmpfs", 0, "mode=0755") != 0) {
		printf("mount: %s\n", strerror(errno));
		return 1;
	}
	char prog[64];
	snprintf(prog, sizeof prog, "%s/rewind-mntns-prog", dir);
	int out = open(prog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (out < 0 || copy_self(out) != 0 || close(out) != 0) {
		perror("copy");
		return 1;
	}
	pid_t c = fork();
	if (c == 0) {
		execl(prog, "rewind-mntns-prog", "inner", (char *)NULL);
		perror("execl");
		_exit(1);
	}
	int ws;
	if (waitpid(c, &ws, 0) != c || !WIFEXITED(ws) || WEXITSTATUS(ws) != 3) {
		printf("bad child status %#x\n", ws);
		return 1;
	}
	printf("parent: the copy exited 3\n");
	umount2(dir, MNT_DETACH);
	printf("OK\n");
	return 0;
}
