// System V semaphores: semget, semctl SETALL/GETALL/GETVAL/GETPID/IPC_STAT/
// SEM_INFO/IPC_RMID, semop, semop with IPC_NOWAIT (EAGAIN), semtimedop
// timing out, and a thread blocked in semop until the main thread posts.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <time.h>
#include <unistd.h>

union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
	struct seminfo *info;
};

static int set;

static void *waiter(void *arg) {
	(void)arg;
	struct sembuf down = {2, -1, 0};
	int r = semop(set, &down, 1); // waits for the main thread's post
	printf("thread passed semaphore 2: %d\n", r);
	return NULL;
}

int main(void) {
	set = semget(IPC_PRIVATE, 3, IPC_CREAT | 0600);
	if (set < 0) {
		perror("semget");
		return 1;
	}
	unsigned short init[3] = {1, 5, 0};
	semctl(set, 0, SETALL, (union semun){.array = init});
	unsigned short got[3 + 1] = {0, 0, 0, 0xbeef};
	semctl(set, 0, GETALL, (union semun){.array = got});
	printf("GETALL: %u %u %u (guard %#x)\n", got[0], got[1], got[2], got[3]);
	int bad = got[0] != 1 || got[1] != 5 || got[2] != 0 || got[3] != 0xbeef;

	struct semid_ds ds;
	semctl(set, 0, IPC_STAT, (union semun){.buf = &ds});
	printf("nsems %lu mode %o\n", (unsigned long)ds.sem_nsems, ds.sem_perm.mode & 0777);
	struct seminfo si;
	int ok = semctl(0, 0, SEM_INFO, (union semun){.info = &si}) >= 0;
	printf("SEM_INFO ok %d, semmsl > 0: %d\n", ok, si.semmsl > 0);

	struct sembuf ops[2] = {{0, -1, 0}, {1, 2, 0}};
	semop(set, ops, 2);
	printf("after semop: %d %d\n", semctl(set, 0, GETVAL), semctl(set, 1, GETVAL));
	printf("GETPID is us: %d\n", semctl(set, 0, GETPID) == getpid());

	struct sembuf again = {0, -1, IPC_NOWAIT};
	errno = 0;
	int r = semop(set, &again, 1);
	printf("nowait: %d %s\n", r, strerror(errno));
	bad |= r != -1 || errno != EAGAIN;
	struct timespec ts = {0, 20 * 1000 * 1000};
	again.sem_flg = 0;
	errno = 0;
	r = semtimedop(set, &again, 1, &ts);
	printf("timed: %d %s\n", r, strerror(errno));
	bad |= r != -1 || errno != EAGAIN;

	pthread_t t;
	pthread_create(&t, NULL, waiter, NULL);
	struct timespec nap = {0, 30 * 1000 * 1000};
	nanosleep(&nap, NULL); // let the thread block in semop
	struct sembuf up = {2, 1, 0};
	semop(set, &up, 1);
	pthread_join(t, NULL);

	semctl(set, 0, GETALL, (union semun){.array = got});
	printf("GETALL: %u %u %u\n", got[0], got[1], got[2]);
	bad |= semctl(set, 0, IPC_RMID) != 0;
	if (bad)
		return 1;
	printf("OK\n");
	return 0;
}
