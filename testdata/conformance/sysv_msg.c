// System V message queues: msgget, msgsnd, msgrcv by type and with
// IPC_NOWAIT on an empty queue (ENOMSG), a thread blocked in msgrcv until
// the main thread sends, msgctl IPC_STAT/MSG_INFO/IPC_RMID.
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <time.h>

struct msg {
	long type;
	char text[64];
};

static int q;

static void *receiver(void *arg) {
	(void)arg;
	struct msg m;
	ssize_t n = msgrcv(q, &m, sizeof m.text, 42, 0); // blocks until main sends
	printf("thread got %zd bytes of type %ld: %s\n", n, m.type, m.text);
	return NULL;
}

int main(void) {
	q = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	if (q < 0) {
		perror("msgget");
		return 1;
	}
	struct msg m = {1, "first"};
	msgsnd(q, &m, strlen(m.text) + 1, 0);
	m.type = 2;
	strcpy(m.text, "second, of type 2");
	msgsnd(q, &m, strlen(m.text) + 1, 0);

	struct msqid_ds ds;
	msgctl(q, IPC_STAT, &ds);
	printf("qnum %lu cbytes %lu mode %o\n", (unsigned long)ds.msg_qnum, (unsigned long)ds.__msg_cbytes, ds.msg_perm.mode & 0777);
	struct msginfo info = {0};
	int hi = msgctl(0, MSG_INFO, (struct msqid_ds *)&info);
	printf("MSG_INFO ok %d, msgmax > 0: %d\n", hi >= 0, info.msgmax > 0);

	struct msg r;
	memset(&r, 0, sizeof r);
	ssize_t n = msgrcv(q, &r, sizeof r.text, 2, 0);
	printf("by type: %zd %ld %s\n", n, r.type, r.text);
	n = msgrcv(q, &r, sizeof r.text, 0, 0);
	printf("first in queue: %zd %ld %s\n", n, r.type, r.text);
	errno = 0;
	n = msgrcv(q, &r, sizeof r.text, 0, IPC_NOWAIT);
	printf("empty: %zd %s\n", n, strerror(errno));
	int bad = n != -1 || errno != ENOMSG;

	pthread_t t;
	pthread_create(&t, NULL, receiver, NULL);
	struct timespec nap = {0, 30 * 1000 * 1000};
	nanosleep(&nap, NULL); // let the thread block in msgrcv
	m.type = 42;
	strcpy(m.text, "for the thread");
	msgsnd(q, &m, strlen(m.text) + 1, 0);
	pthread_join(t, NULL);

	msgctl(q, IPC_STAT, &ds);
	printf("qnum after %lu\n", (unsigned long)ds.msg_qnum);
	bad |= ds.msg_qnum != 0;
	bad |= msgctl(q, IPC_RMID, NULL) != 0;
	if (bad)
		return 1;
	printf("OK\n");
	return 0;
}
