// Kernel keys by raw system calls: add_key into the process keyring,
// request_key finding it (and ENOKEY for a missing one), keyctl
// GET_KEYRING_ID, DESCRIBE, READ (sized first with a NULL buffer, then into
// a short buffer and a large one), SEARCH, UPDATE, CAPABILITIES, REVOKE and a
// READ of the revoked key (EKEYREVOKED).
#define _GNU_SOURCE
#include <errno.h>
#include <linux/keyctl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long keyctl(int op, long a, long b, long c, long d) { return syscall(SYS_keyctl, op, a, b, c, d); }

int main(void) {
	int bad = 0;
	long key = syscall(SYS_add_key, "user", "rewind:conformance", "secret payload", 14, KEY_SPEC_PROCESS_KEYRING);
	if (key < 0) {
		printf("add_key unavailable: %s\n", strerror(errno));
		printf("OK\n");
		return 0;
	}
	long ring = keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 0, 0, 0);
	printf("process keyring found: %d\n", ring > 0);
	long found = syscall(SYS_request_key, "user", "rewind:conformance", NULL, 0);
	printf("request_key finds it: %d\n", found == key);
	bad |= found != key;
	errno = 0;
	long missing = syscall(SYS_request_key, "user", "rewind:no-such-key", NULL, 0);
	printf("missing: %ld %s\n", missing, strerror(errno));
	bad |= missing != -1 || errno != ENOKEY;

	char desc[128] = {0};
	long n = keyctl(KEYCTL_DESCRIBE, key, (long)desc, sizeof desc, 0);
	char *name = strrchr(desc, ';');
	printf("describe: %ld bytes, type %.4s, name %s\n", n, desc, name ? name + 1 : "?");

	long size = keyctl(KEYCTL_READ, key, 0, 0, 0);
	char small[6] = {0}, big[64] = {0};
	long s1 = keyctl(KEYCTL_READ, key, (long)small, sizeof small - 1, 0);
	long s2 = keyctl(KEYCTL_READ, key, (long)big, sizeof big, 0);
	printf("read: size %ld, short %ld, full %ld \"%s\"\n", size, s1, s2, big);
	bad |= size != 14 || s2 != 14 || strcmp(big, "secret payload") != 0;

	long s = keyctl(KEYCTL_SEARCH, KEY_SPEC_PROCESS_KEYRING, (long)"user", (long)"rewind:conformance", 0);
	printf("search finds it: %d\n", s == key);
	keyctl(KEYCTL_UPDATE, key, (long)"new", 3, 0);
	memset(big, 0, sizeof big);
	keyctl(KEYCTL_READ, key, (long)big, sizeof big, 0);
	printf("after update: %s\n", big);
	bad |= strcmp(big, "new") != 0;

	unsigned char caps[2] = {0};
	long c = keyctl(KEYCTL_CAPABILITIES, (long)caps, sizeof caps, 0, 0);
	printf("capabilities: %ld bytes, KEYCTL_CAPS0_CAPABILITIES %d\n", c, c > 0 && (caps[0] & 1));

	keyctl(KEYCTL_REVOKE, key, 0, 0, 0);
	errno = 0;
	long r = keyctl(KEYCTL_READ, key, (long)big, sizeof big, 0);
	printf("read revoked: %ld %s\n", r, strerror(errno));
	bad |= r != -1 || errno != EKEYREVOKED;
	if (bad)
		return 1;
	printf("OK\n");
	return 0;
}
