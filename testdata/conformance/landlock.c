// Landlock: the ABI version, a ruleset handling file reads, a rule allowing
// reads beneath one directory, restrict_self (after PR_SET_NO_NEW_PRIVS),
// then a read allowed there and one denied elsewhere (EACCES). Both are
// replayed by their results: replay does not restrict itself.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void) {
	int bad = 0;
	char dir[] = "/tmp/rewind-landlock-XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	char file[64];
	snprintf(file, sizeof file, "%s/allowed", dir);
	int fd = open(file, O_CREAT | O_WRONLY, 0600);
	write(fd, "readable\n", 9);
	close(fd);

	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 0) {
		printf("landlock unavailable: %s\n", strerror(errno));
		unlink(file);
		rmdir(dir);
		printf("OK\n");
		return 0;
	}
	printf("ABI version >= 1: %d\n", abi >= 1);
	struct landlock_ruleset_attr ra = {.handled_access_fs = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR};
	int rs = syscall(SYS_landlock_create_ruleset, &ra, sizeof ra, 0);
	struct landlock_path_beneath_attr pb = {.allowed_access = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR};
	pb.parent_fd = open(dir, O_PATH | O_CLOEXEC);
	printf("add_rule: %ld\n", syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0));
	errno = 0;
	long bad_rule = syscall(SYS_landlock_add_rule, rs, 99, &pb, 0);
	printf("unknown rule type: %ld %s\n", bad_rule, strerror(errno));
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	printf("restrict_self: %ld\n", syscall(SYS_landlock_restrict_self, rs, 0));
	close(rs);
	close(pb.parent_fd);

	char buf[32] = {0};
	fd = open(file, O_RDONLY);
	printf("allowed read: %zd %s", fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1L, buf);
	if (fd >= 0)
		close(fd);
	bad |= strcmp(buf, "readable\n") != 0;
	errno = 0;
	int denied = open("/etc/passwd", O_RDONLY);
	printf("denied read: %d %s\n", denied, strerror(errno));
	bad |= denied != -1 || errno != EACCES;
	unlink(file);
	rmdir(dir);
	if (bad)
		return 1;
	printf("OK\n");
	return 0;
}
