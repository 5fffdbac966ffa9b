// ticks.c: prints "tick N" for N = 1..count (argv[1], default 5), one every
// 50 ms, then sleeps until it is killed. A recording of it that is cut by a
// kill of the recorder must still hold every tick.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int count = argc > 1 ? atoi(argv[1]) : 5;
	for (int i = 1; i <= count; i++) {
		printf("tick %d\n", i);
		fflush(stdout);
		usleep(50000);
	}
	for (;;)
		pause();
}
