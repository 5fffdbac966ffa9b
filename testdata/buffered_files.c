// buffered_files.c: the file system calls the hook page records in the
// program (issue 23): openat of files and directories, statx, access,
// faccessat, readlink, getcwd, uname and getrandom, the clocks of the vDSO
// (gettimeofday, time), sysinfo, pipe2, getrusage and fadvise64, and the calls that
// change files without waiting (mkdir, rmdir, locks, fsync, chmod, chown,
// unlink), N rounds over the files
// of a directory (argv[1]) it fills first, with a global written after each
// round. What it prints depends on every answer, getrandom's included, so
// that a replay that got one wrong prints something else.
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "mix.h"

// stat4 and lstat6 make the old stat and lstat calls, which glibc's
// wrappers no longer make but older binaries do (make, here), at sites of
// the shape glibc's wrappers have (mov $nr,%eax; syscall).
static long stat4(const char *p, struct stat *st) {
	long ret;
	__asm__ volatile("mov $4, %%eax\n\tsyscall" : "=a"(ret) : "D"(p), "S"(st) : "rcx", "r11", "memory");
	return ret;
}

static long lstat6(const char *p, struct stat *st) {
	long ret;
	__asm__ volatile("mov $6, %%eax\n\tsyscall" : "=a"(ret) : "D"(p), "S"(st) : "rcx", "r11", "memory");
	return ret;
}

// changes makes the file system calls that change files and never wait
// for another process: a directory made and removed, a lock taken and
// asked about, a file synced, its mode and owner set, files that are not
// there unlinked.
static void changes(const char *dir, int i) {
	char path[4096];
	snprintf(path, sizeof path, "%s/d%d", dir, i % 4);
	sum += mkdir(path, 0755) == 0;
	sum += rmdir(path) == 0;
	snprintf(path, sizeof path, "%s/f%d", dir, i % 8);
	int fd = open(path, O_RDWR);
	if (fd >= 0) {
		struct flock set = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
		sum += fcntl(fd, F_SETLK, &set) == 0;
		struct flock ask = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
		if (fcntl(fd, F_GETLK, &ask) == 0)
			sum += ask.l_type;
		sum += fsync(fd) == 0;
		sum += fdatasync(fd) == 0;
		sum += fchmod(fd, 0644) == 0;
		sum += fchown(fd, getuid(), getgid()) == 0;
		close(fd);
	}
	struct stat sb;
	if (stat4(path, &sb) == 0)
		mix(&sb.st_size, sizeof sb.st_size);
	if (lstat6(path, &sb) == 0)
		mix(&sb.st_mode, sizeof sb.st_mode);
	sum += chmod(path, 0644) == 0;
	sum += fchmodat(AT_FDCWD, path, 0600, 0) == 0;
	sum += fchownat(AT_FDCWD, path, getuid(), getgid(), 0) == 0;
	snprintf(path, sizeof path, "%s/gone%d", dir, i);
	sum += unlink(path) == 0 ? 1 : 2;
	sum += unlinkat(AT_FDCWD, path, 0) == 0 ? 1 : 2;
}

static void round_(const char *dir, int i) {
	char path[4096], buf[256];
	snprintf(path, sizeof path, "%s/f%d", dir, i % 8);
	int fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n > 0)
			mix(buf, n);
		close(fd);
	}
	struct statx stx;
	if (statx(AT_FDCWD, path, 0, STATX_SIZE, &stx) == 0)
		mix(&stx.stx_size, sizeof stx.stx_size);
	sum += access(path, R_OK) == 0;
	sum += faccessat(AT_FDCWD, "no-such-file", F_OK, 0) == 0;
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf);
	sum += n > 0;
	if (getcwd(buf, sizeof buf) != NULL)
		mix(buf, strlen(buf));
	struct utsname u;
	if (uname(&u) == 0)
		mix(u.sysname, strlen(u.sysname));
	unsigned r;
	if (getrandom(&r, sizeof r, 0) == sizeof r)
		mix(&r, sizeof r);
	int d = open(dir, O_RDONLY | O_DIRECTORY);
	if (d >= 0)
		close(d);
	struct timeval tv;
	if (gettimeofday(&tv, NULL) == 0)
		mix(&tv, sizeof tv);
	time_t now = time(NULL);
	mix(&now, sizeof now);
	struct sysinfo si;
	if (sysinfo(&si) == 0)
		mix(&si.uptime, sizeof si.uptime);
	// A pipe made and closed (its descriptors depend on those open), the
	// process's usage asked, and advice given on a file.
	int p[2];
	if (pipe2(p, O_CLOEXEC) == 0) {
		mix(p, sizeof p);
		close(p[0]);
		close(p[1]);
	}
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		mix(&ru.ru_maxrss, sizeof ru.ru_maxrss);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		sum += posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL) == 0;
		close(fd);
	}
	changes(dir, i);
}

int main(int argc, char **argv) {
	if (argc < 2) {
		fprintf(stderr, "usage: buffered_files DIR [N]\n");
		return 2;
	}
	int rounds = argc > 2 ? atoi(argv[2]) : 200;
	for (int i = 0; i < 8; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/f%d", argv[1], i);
		FILE *f = fopen(path, "w");
		if (f == NULL) {
			perror(path);
			return 1;
		}
		fprintf(f, "file %d %.*s\n", i, i * 10, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
		fclose(f);
	}
	for (int i = 0; i < rounds; i++)
		round_(argv[1], i);
	printf("rounds %d sum %lx\n", rounds, sum);
	return 0;
}
