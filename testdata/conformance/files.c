// Files: openat, write, pread, lseek, fstat, getdents64, rename, unlink,
// a failed open (ENOENT) and a failed read (EBADF) emulated with their errors.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void) {
	char dir[] = "/tmp/rewind-conf-XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	char a[64], b[64];
	snprintf(a, sizeof a, "%s/a", dir);
	snprintf(b, sizeof b, "%s/b", dir);
	int fd = open(a, O_CREAT | O_RDWR | O_TRUNC, 0600);
	write(fd, "hello, world\n", 13);
	char buf[16] = {0};
	pread(fd, buf, 5, 7);
	printf("pread: %s\n", buf);
	struct stat st;
	fstat(fd, &st);
	printf("size: %lld\n", (long long)st.st_size);
	printf("lseek: %lld\n", (long long)lseek(fd, 0, SEEK_END));
	close(fd);
	rename(a, b);
	int n = 0;
	DIR *d = opendir(dir);
	struct dirent *de;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			printf("entry %d: %s\n", n++, de->d_name);
	closedir(d);
	errno = 0;
	printf("open missing: %d %s\n", open(a, O_RDONLY), strerror(errno));
	errno = 0;
	printf("read bad fd: %zd %s\n", read(999, buf, 1), strerror(errno));
	unlink(b);
	rmdir(dir);
	printf("OK\n");
	return 0;
}
