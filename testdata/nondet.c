// nondet.c: the classic sources of nondeterminism a recorder must capture:
// getrandom, clock_gettime (MONOTONIC, REALTIME; usually served by the vDSO),
// gettimeofday (vDSO), the rdtsc and rdtscp instructions, getpid/gettid, and
// file I/O on a fresh mkstemp file (random name, random contents).
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

static uint64_t fnv1a(const unsigned char *p, size_t n) {
	uint64_t h = 14695981039346656037ULL;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 1099511628211ULL;
	}
	return h;
}

int main(void) {
	unsigned char rnd[16];
	if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd) {
		perror("getrandom");
		return 1;
	}
	printf("random: ");
	for (size_t i = 0; i < sizeof rnd; i++)
		printf("%02x", rnd[i]);
	printf("\n");

	struct timespec mono, real;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	printf("monotonic: %lld.%09ld\n", (long long)mono.tv_sec, mono.tv_nsec);
	printf("realtime: %lld.%09ld\n", (long long)real.tv_sec, real.tv_nsec);

	struct timeval tv;
	gettimeofday(&tv, NULL);
	printf("gettimeofday: %lld.%06ld\n", (long long)tv.tv_sec, (long)tv.tv_usec);

	unsigned int aux = 0;
	unsigned long long tsc = __rdtsc();
	unsigned long long tscp = __rdtscp(&aux);
	printf("rdtsc: %llu\n", tsc);
	printf("rdtscp: %llu aux=%u\n", tscp, aux);

	printf("pid: %d\n", (int)getpid());
	printf("tid: %d\n", (int)gettid());

	/* Where the machine keeps temporary files: /tmp may be another's. */
	const char *tmp = getenv("TMPDIR");
	char path[4096];
	snprintf(path, sizeof path, "%s/rewind-nondet-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemp(path);
	if (fd < 0) {
		perror("mkstemp");
		return 1;
	}
	unsigned char data[64], back[64];
	if (getrandom(data, sizeof data, 0) != sizeof data ||
	    write(fd, data, sizeof data) != sizeof data) {
		perror("write");
		return 1;
	}
	if (lseek(fd, 0, SEEK_SET) != 0 || read(fd, back, sizeof back) != sizeof back) {
		perror("read");
		return 1;
	}
	close(fd);
	unlink(path);
	printf("tempfile: %s\n", path);
	printf("digest: %016llx\n", (unsigned long long)fnv1a(back, sizeof back));
	return 0;
}
