// prctl forms that do not fight the recorder, with the outputs of the GET
// forms: PR_SET_NAME/PR_GET_NAME, PR_SET_DUMPABLE/PR_GET_DUMPABLE,
// PR_SET_PDEATHSIG/PR_GET_PDEATHSIG, PR_GET_SECCOMP, PR_SET_NO_NEW_PRIVS,
// PR_CAPBSET_READ, PR_SET_CHILD_SUBREAPER/PR_GET_CHILD_SUBREAPER,
// PR_SET_VMA (naming an anonymous mapping), PR_GET_TID_ADDRESS,
// PR_SET_TIMERSLACK/PR_GET_TIMERSLACK, PR_GET_AUXV and a bad option (EINVAL).
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif
#ifndef PR_GET_AUXV
#define PR_GET_AUXV 0x41555856
#endif

// named reports whether /proc/self/maps shows the mapping at p named name.
static int named(void *p, const char *name) {
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512], want[64];
	snprintf(want, sizeof want, "%lx-", (unsigned long)p);
	int found = 0;
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, want, strlen(want)) && strstr(line, name))
			found = 1;
	if (f)
		fclose(f);
	return found;
}

int main(void) {
	int bad = 0;
	char name[16] = {0};
	prctl(PR_SET_NAME, "rewind-prctl");
	prctl(PR_GET_NAME, name);
	printf("name %s\n", name);
	bad |= strcmp(name, "rewind-prctl") != 0;
	FILE *comm = fopen("/proc/thread-self/comm", "r");
	char c[32] = {0};
	if (comm && fgets(c, sizeof c, comm))
		printf("comm %s", c);
	if (comm)
		fclose(comm);

	int d0 = prctl(PR_GET_DUMPABLE);
	prctl(PR_SET_DUMPABLE, 0);
	int d1 = prctl(PR_GET_DUMPABLE);
	prctl(PR_SET_DUMPABLE, 1);
	int d2 = prctl(PR_GET_DUMPABLE);
	printf("dumpable %d -> %d -> %d\n", d0, d1, d2);
	bad |= d1 != 0;

	int sig = -1;
	prctl(PR_SET_PDEATHSIG, SIGUSR1);
	prctl(PR_GET_PDEATHSIG, &sig);
	printf("pdeathsig %d\n", sig);
	bad |= sig != SIGUSR1;
	prctl(PR_SET_PDEATHSIG, 0);

	printf("seccomp mode %d\n", prctl(PR_GET_SECCOMP));
	int n0 = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	int ns = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	int n1 = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	printf("no_new_privs set %d: %d -> %d\n", ns, n0, n1);
	bad |= ns != 0 || n1 != 1;
	int cap = prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN);
	int past = prctl(PR_CAPBSET_READ, 1000);
	printf("capbset CAP_SYS_ADMIN %d, past the last: %d\n", cap, past);
	bad |= past != -1;

	int sub = -1;
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	prctl(PR_GET_CHILD_SUBREAPER, &sub);
	printf("child subreaper %d\n", sub);
	bad |= sub != 1;

	void *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int v = prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, p, 8192, "rewind-vma");
	if (v == 0) {
		printf("PR_SET_VMA: named in maps: %d\n", named(p, "[anon:rewind-vma]"));
		bad |= !named(p, "[anon:rewind-vma]");
	} else {
		printf("PR_SET_VMA: %s\n", strerror(errno)); // without CONFIG_ANON_VMA_NAME
	}

	int *tidp = NULL;
	int ta = prctl(PR_GET_TID_ADDRESS, &tidp);
	printf("PR_GET_TID_ADDRESS %d, set: %d\n", ta, tidp != NULL);
	bad |= ta == 0 && tidp == NULL;

	prctl(PR_SET_TIMERSLACK, 12345);
	printf("timerslack %d\n", prctl(PR_GET_TIMERSLACK));
	bad |= prctl(PR_GET_TIMERSLACK) != 12345;

	unsigned long auxv[64];
	memset(auxv, 0, sizeof auxv);
	long n = prctl(PR_GET_AUXV, auxv, sizeof auxv, 0, 0);
	if (n > 0) {
		unsigned long pagesz = 0;
		for (int i = 0; i + 1 < 64 && auxv[i]; i += 2)
			if (auxv[i] == AT_PAGESZ)
				pagesz = auxv[i + 1];
		printf("auxv AT_PAGESZ %lu (getauxval %lu)\n", pagesz, getauxval(AT_PAGESZ));
		bad |= pagesz != getauxval(AT_PAGESZ);
	} else {
		printf("PR_GET_AUXV unavailable\n");
	}

	errno = 0;
	int r = prctl(9999, 0, 0, 0, 0);
	printf("bad option: %d %s\n", r, strerror(errno));
	bad |= r != -1 || errno != EINVAL;
	if (bad)
		return 1;
	printf("OK\n");
	return 0;
}
