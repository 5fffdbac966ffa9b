// Programs run from a memfd, as runc and systemd run theirs: this program
// copies itself into a close-on-exec memfd and fexecve's it; a shell script
// in a memfd (not close-on-exec: its interpreter reads it by /dev/fd/N)
// is fexecve'd too; the same script through a close-on-exec memfd fails
// (ENOENT). The new images see the names the kernel gives them
// (AT_EXECFN, the script's $0): replay must run the same programs through
// the same descriptors, though the memfds' contents are only in the
// recording.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "copyself.h"

extern char **environ;

// run forks a child that runs fexecve(fd, argv) and returns its exit status.
static int run(int fd, char *const argv[]) {
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		fexecve(fd, argv, environ);
		printf("fexecve %s: %s\n", argv[0], strerror(errno));
		_exit(errno == ENOENT ? 3 : 127);
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && strcmp(argv[1], "child") == 0) {
		printf("child: argv[0]=%s execfn=%s\n", argv[0], (char *)getauxval(AT_EXECFN));
		return 5;
	}
	int bad = 0;

	int self = memfd_create("self", MFD_CLOEXEC);
	if (self < 0 || copy_self(self) != 0)
		return 1;
	char *selfArgv[] = {"from-memfd", "child", NULL};
	int code = run(self, selfArgv);
	printf("self: exit %d\n", code);
	bad |= code != 5;

	const char script[] = "#!/bin/sh\necho \"script: \\$0=$0 \\$1=$1\"\nexit 6\n";
	int sh = memfd_create("script", 0);
	if (sh < 0 || write(sh, script, sizeof script - 1) != sizeof script - 1)
		return 1;
	char *shArgv[] = {"script", "arg", NULL};
	code = run(sh, shArgv);
	printf("script: exit %d\n", code);
	bad |= code != 6;

	int shc = memfd_create("script-cloexec", MFD_CLOEXEC);
	if (shc < 0 || write(shc, script, sizeof script - 1) != sizeof script - 1)
		return 1;
	code = run(shc, shArgv);
	printf("close-on-exec script: exit %d\n", code);
	bad |= code != 3;

	printf(bad ? "FAIL\n" : "OK\n");
	return bad;
}
