// deepframe.c N: a worker parses the same text N times, each time through
// a frame that holds 8 KiB of scratch between its loop's counter and the
// parser, as gdb's worker threads run its name parser once per symbol; a
// watcher sums how far the worker has got, as often as it can. Inside the
// parser every item passes the same points with the same registers and
// nearby stack: only the counter, more than 4 KiB further up, tells them
// apart, so a preemption there must carry it (TestChaosDeepFrame). Built
// with -O0, so that the counter stays in memory.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

static const char text[] = "std::vector<std::pair<int, char const*>, std::allocator<std::pair<int, char const*> > >::push_back";
static long n;
// In a page of its own: the data the fingerprint hashes is the
// executable's and the brk heap.
static volatile long *progress;

static unsigned long parse(const char *s) {
	unsigned long h = 5381;
	for (int r = 0; r < 20; r++)
		for (const char *p = s; *p; p++)
			h = h * 33 + (unsigned char)*p;
	return h;
}

static unsigned long item(void) {
	char scratch[8192];
	for (int i = 0; i < (int)sizeof text; i++)
		scratch[i] = text[i];
	return parse(scratch);
}

static void *worker(void *arg) {
	unsigned long h = 0;
	for (long i = 0; i < n; i++) {
		h += item();
		*progress = i + 1;
	}
	return (void *)h;
}

static void *watcher(void *arg) {
	long seen = 0;
	while (*progress < n)
		seen += *progress;
	return (void *)seen;
}

int main(int argc, char **argv) {
	n = argc > 1 ? atol(argv[1]) : 20000;
	progress = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_t w, s;
	void *h, *seen;
	pthread_create(&w, NULL, worker, NULL);
	pthread_create(&s, NULL, watcher, NULL);
	pthread_join(w, &h);
	pthread_join(s, &seen);
	printf("%lx %ld\n", (unsigned long)h, (long)seen);
	return 0;
}
