// A SysV shared memory segment attached twice (a write through one
// attachment shows in the other), shmctl(IPC_STAT) counting them, shmdt,
// IPC_RMID; a forked child writes to the segment the parent then reads.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

int main(void) {
	int id = shmget(IPC_PRIVATE, 3 * 4096, IPC_CREAT | 0600);
	CHECK(id >= 0);
	char *a = shmat(id, NULL, 0);
	char *b = shmat(id, NULL, 0);
	CHECK(a != (void *)-1 && b != (void *)-1 && a != b);
	printf("fresh: %d\n", a[100]);
	strcpy(a + 100, "through a");
	printf("b sees: %s\n", b + 100);
	CHECK(strcmp(b + 100, "through a") == 0);
	const char *r = shmat(id, NULL, SHM_RDONLY);
	CHECK(r != (void *)-1);
	printf("read-only sees: %s\n", r + 100);
	struct shmid_ds ds;
	CHECK(shmctl(id, IPC_STAT, &ds) == 0);
	printf("size %zu attached %lu\n", ds.shm_segsz, (unsigned long)ds.shm_nattch);
	CHECK(shmdt(r) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		strcpy(a + 4096, "from the child");
		_exit(0);
	}
	int st;
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
	printf("child wrote: %s\n", b + 4096);
	CHECK(strcmp(b + 4096, "from the child") == 0);
	CHECK(shmdt(a) == 0);
	CHECK(shmctl(id, IPC_RMID, NULL) == 0);
	printf("b still sees: %s\n", b + 100);
	CHECK(shmdt(b) == 0);
	printf("OK\n");
	return 0;
}
