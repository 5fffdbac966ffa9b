/* gdb habits: displays, conditions, ignore counts, printf, pretty
 * printing and threads with small numbers. */
#include <pthread.h>
#include <stdio.h>

struct point {
	int x, y;
};

struct shape {
	const char *name;
	struct point corner[2];
	double area;
};

int counter;
const char *greeting = "hello";

static int bump(int step)
{
	counter += step;
	return counter;
}

static void *worker(void *arg)
{
	int id = *(int *)arg;
	bump(id * 100);
	return NULL;
}

int main(void)
{
	struct shape s = {"box", {{1, 2}, {4, 6}}, 12.5};
	for (int i = 1; i <= 5; i++)
		bump(i);
	pthread_t t[2];
	int ids[2] = {1, 2};
	for (int k = 0; k < 2; k++) {
		pthread_create(&t[k], NULL, worker, &ids[k]);
		pthread_join(t[k], NULL);
	}
	printf("%s %d %g\n", s.name, counter, s.area);
	return 0;
}
