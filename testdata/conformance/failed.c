// Failed system calls, whatever the number: syscall(-1), numbers no kernel
// assigns (400, 999, 100000), a known call failing (mount with a bad
// filesystem type, msgctl on no queue), and uretprobe outside a uprobe
// trampoline, which fails and raises SIGILL. Each is replayed with its error.
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/syscall.h>
#include <unistd.h>

static sigjmp_buf jb;
static void on_sigill(int sig) { siglongjmp(jb, sig); }

static int bad = 0;

static void expect(const char *what, long r, int want) {
	int e = errno;
	printf("%s: %ld %s\n", what, r, strerror(e));
	if (r != -1 || e != want)
		bad = 1;
}

int main(void) {
	long nrs[] = {-1, 400, 999, 100000, 0x7fffffff};
	for (int i = 0; i < 5; i++) {
		char what[32];
		snprintf(what, sizeof what, "syscall(%ld)", nrs[i]);
		errno = 0;
		expect(what, syscall(nrs[i], 1, 2, 3), ENOSYS);
	}
	errno = 0;
	expect("mount bogus fs", mount("none", "/tmp", "rewind-no-such-fs", 0, NULL), geteuid() == 0 ? ENODEV : EPERM);
	struct msqid_ds ds;
	memset(&ds, 0x5a, sizeof ds);
	errno = 0;
	expect("msgctl no queue", msgctl(-1, IPC_STAT, &ds), EINVAL);
	printf("msqid_ds untouched: %d\n", ((unsigned char *)&ds)[0] == 0x5a);

	signal(SIGILL, on_sigill);
	int sig = sigsetjmp(jb, 1);
	if (!sig) {
		long r = syscall(335); // uretprobe
		printf("uretprobe returned %ld\n", r);
	} else {
		printf("uretprobe: signal %d\n", sig);
	}
	if (bad)
		return 1;
	printf("OK\n");
	return 0;
}
