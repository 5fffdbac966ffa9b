/* Two threads, one after the other, change a library's thread-local
   variables and get errno from a failing call; each prints the values and
   their addresses, which a debugger must find again. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

extern __thread int lib_counter;
extern __thread char lib_tag[16];
int *lib_bump(int by, const char *tag);

static void *worker(void *arg)
{
	long id = (long)arg;
	int *p = lib_bump((int)id * 10, id == 1 ? "one" : "two");
	int r = id == 1 ? open("/nonexistent/rewind", O_RDONLY) : close(-1);
	int e = errno;
	printf("thread %ld: lib_counter=%d at %p, errno=%d at %p, r=%d\n", id, *p, (void *)p, e, (void *)&errno, r);
	fflush(stdout);
	return NULL; /* break here */
}

int main(void)
{
	for (long id = 1; id <= 2; id++) {
		pthread_t t;
		pthread_create(&t, NULL, worker, (void *)id);
		pthread_join(t, NULL);
	}
	printf("main: lib_counter=%d at %p\n", lib_counter, (void *)&lib_counter);
	return 0; /* and here */
}
