// execveat in its forms: relative to a directory descriptor (O_PATH),
// AT_EMPTY_PATH on an O_PATH descriptor of the program, and execve of a
// /dev/fd/N path. The kernel names the new program after the descriptor
// (AT_EXECFN /dev/fd/N[/name]): replay has no descriptors of its own
// (opening is emulated) and must run the same program through the same
// numbers.
#define _GNU_SOURCE
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

// run forks a child that makes the call exec makes, and returns its exit
// status.
static int run(const char *what, void (*exec)(void)) {
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		exec();
		printf("%s: %m\n", what);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	printf("%s: exit %d\n", what, code);
	return code;
}

static int dirFd, exeFd, rdFd;
static char name[NAME_MAX + 1];
static char *childArgv[] = {"child", "child", NULL};

static void atDir(void) { syscall(SYS_execveat, dirFd, name, childArgv, environ, 0); }
static void emptyPath(void) { syscall(SYS_execveat, exeFd, "", childArgv, environ, AT_EMPTY_PATH); }
static void devFd(void) {
	char path[32];
	snprintf(path, sizeof path, "/dev/fd/%d", rdFd);
	execve(path, childArgv, environ);
}

int main(int argc, char **argv) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && strcmp(argv[1], "child") == 0) {
		const char *fn = (const char *)getauxval(AT_EXECFN);
		// The relative form ends with the program's own name.
		printf("child: execfn %.*s\n", (int)strcspn(fn + strlen("/dev/fd/"), "/") + (int)strlen("/dev/fd/"), fn);
		return 7;
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n < 0)
		return 1;
	exe[n] = 0;
	snprintf(name, sizeof name, "%s", basename(strdup(exe)));
	dirFd = open(dirname(strdup(exe)), O_PATH | O_DIRECTORY | O_CLOEXEC);
	exeFd = open(exe, O_PATH | O_CLOEXEC);
	rdFd = open(exe, O_RDONLY); // inherited: execve opens /dev/fd/N itself
	if (dirFd < 0 || exeFd < 0 || rdFd < 0)
		return 1;
	int bad = 0;
	bad |= run("execveat(dirfd, name)", atDir) != 7;
	bad |= run("execveat(fd, \"\", AT_EMPTY_PATH)", emptyPath) != 7;
	bad |= run("execve(/dev/fd/N)", devFd) != 7;
	printf(bad ? "FAIL\n" : "OK\n");
	return bad;
}
