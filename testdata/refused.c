// refused: system calls Rewind answers itself. io_uring_setup and rseq must
// see ENOSYS (in recording and replay alike); with an argument, sysfs, a call
// few programs make, replays by its recorded result.
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
	char params[120];
	memset(params, 0, sizeof params);
	long r = syscall(SYS_io_uring_setup, 4, params);
	printf("io_uring_setup: %ld errno %d\n", r, r < 0 ? errno : 0);
	fflush(stdout);
	if (argc > 1) {
		r = syscall(SYS_sysfs, 3);
		printf("sysfs: %ld\n", r);
	}
	return 0;
}
