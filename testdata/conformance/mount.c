// The mount family by its results: unshare(CLONE_NEWNS), mount of a tmpfs
// on a fresh directory, a file made in it, statfs, umount2, the new mount
// API (fsopen, fsconfig, fsmount, move_mount), pivot_root into a tmpfs and
// setns back into the original namespace, chroot("/"), and failures
// (pivot_root on a non-mount point, umount2 of what is not mounted, setns
// with a bad descriptor). Without privileges each call fails, and that is
// replayed.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef FSCONFIG_CMD_CREATE
#define FSCONFIG_CMD_CREATE 6
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#define TMPFS_MAGIC 0x01021994

static void say(const char *what, long r) {
	printf("%s: %ld%s%s\n", what, r, r < 0 ? " " : "", r < 0 ? strerror(errno) : "");
}

int main(void) {
	char dir[] = "/tmp/rewind-mount-XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	char file[64], sub[64];
	snprintf(file, sizeof file, "%s/file", dir);
	snprintf(sub, sizeof sub, "%s/old", dir);
	int bad = 0;
	int oldns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);

	errno = 0;
	long r = unshare(CLONE_NEWNS);
	say("unshare(CLONE_NEWNS)", r);
	if (r == 0) {
		say("mount private", mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
		r = mount("rewind", dir, "tmpfs", 0, "size=1m,mode=0700");
		say("mount tmpfs", r);
		if (r == 0) {
			int fd = open(file, O_CREAT | O_WRONLY, 0600);
			printf("write in tmpfs: %zd\n", write(fd, "inside", 6));
			close(fd);
			struct statfs sf;
			statfs(dir, &sf);
			printf("statfs type is tmpfs: %d\n", sf.f_type == TMPFS_MAGIC);
			bad |= sf.f_type != TMPFS_MAGIC;
			mkdir(sub, 0700);
			say("pivot_root on a non-mount point", syscall(SYS_pivot_root, sub, sub));
			say("umount2", umount2(dir, 0));
			printf("file gone with the mount: %d\n", access(file, F_OK) != 0);
			bad |= access(file, F_OK) == 0;
		}
		int fs = syscall(SYS_fsopen, "tmpfs", 0);
		say("fsopen", fs);
		if (fs >= 0) {
			say("fsconfig create", syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0));
			int mfd = syscall(SYS_fsmount, fs, 0, 0);
			say("fsmount", mfd >= 0 ? 0 : -1);
			if (mfd >= 0) {
				r = syscall(SYS_move_mount, mfd, "", AT_FDCWD, dir, MOVE_MOUNT_F_EMPTY_PATH);
				say("move_mount", r);
				close(mfd);
				if (r == 0) {
					// Make the new tmpfs the root, the old root under /old.
					mkdir(sub, 0700);
					say("pivot_root", syscall(SYS_pivot_root, dir, sub));
					printf("old root under /old: %d\n", access("/old/proc/self", F_OK) == 0);
					say("umount2 old root", umount2("/old", MNT_DETACH));
					printf("root is the empty tmpfs: %d\n", access("/old/proc", F_OK) != 0);
				}
			}
			close(fs);
		}
		say("setns back", setns(oldns, CLONE_NEWNS));
	}
	say("umount2 not mounted", umount2(dir, 0));
	say("setns bad fd", setns(-1, CLONE_NEWNS));
	say("chroot /", chroot("/"));
	printf("back in the original namespace: %d\n", access("/proc/self", F_OK) == 0);
	rmdir(sub);
	unlink(file);
	rmdir(dir);
	if (bad)
		return 1;
	printf("OK\n");
	return 0;
}
