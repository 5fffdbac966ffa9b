// A thread counts in memory that no register, stack slot or global holds
// (an anonymous mapping, reached through a pointer that stays the same):
// every pass of its loop has the same registers, stack and global data,
// which once made the recorder take it for a spin. Another thread prints
// the count whenever it gets the CPU. Replay must stop the counting
// thread at the recorded pass, not the first with those registers.
// flags: -pthread -O2
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>

#define LIMIT 1000000000L

static volatile long *slots;

static void *count(void *arg) {
	(void)arg;
	unsigned char more;
	do {
		__asm__ volatile("addq $1, %1\n\tcmpq %2, %1\n\tsetl %0"
				 : "=q"(more), "+m"(slots[0])
				 : "i"(LIMIT)
				 : "cc");
	} while (more);
	return NULL;
}

int main(void) {
	slots = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_t t;
	pthread_create(&t, NULL, count, NULL);
	for (int i = 0; i < 20; i++) {
		for (volatile long j = 0; j < 2000000; j++) {
		}
		printf("count %ld\n", slots[0]);
		fflush(stdout);
	}
	pthread_join(t, NULL);
	printf("OK\n");
	return 0;
}
