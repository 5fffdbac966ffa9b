// Anonymous shared memory between a parent and its children: a child
// writes, the parent reads after waitpid; two children take turns through
// a counter in the shared page, synchronised by pipes.
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
	volatile long *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		shared[0] = 42;
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	printf("child wrote %ld\n", shared[0]);

	int ping[2], pong[2];
	pipe(ping);
	pipe(pong);
	char c = 'x';
	pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 100; i++) {
			read(ping[0], &c, 1);
			shared[1] += 2;
			write(pong[1], &c, 1);
		}
		_exit(0);
	}
	for (int i = 0; i < 100; i++) {
		shared[1] += 1;
		write(ping[1], &c, 1);
		read(pong[0], &c, 1);
	}
	waitpid(pid, NULL, 0);
	printf("counter %ld\n", shared[1]);
	printf("OK\n");
	return 0;
}
