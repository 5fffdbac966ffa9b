// knownexit.c: arch_prctl(ARCH_SET_FS) and set_robust_list made as the
// loader makes them, at sites the hook cannot patch (another instruction
// between the number's mov and the syscall), whose exits the recorder
// knows at their entry: with arguments they take (N times each), and with
// ones they refuse (a non-canonical address: EPERM; another size: EINVAL),
// whose results it must not guess. It prints the results and a
// thread-local variable read through fs.
#include <asm/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static __thread int tls = 7;

/* raw makes call nr at a site of no shape the hook patches. */
static long raw(long nr, long a, long b) {
	long ret;
	__asm__ volatile("movl %k1, %%eax\n\tmovq %2, %%rdi\n\tmovq %3, %%rsi\n\tsyscall"
			 : "=&a"(ret)
			 : "r"(nr), "r"(a), "r"(b)
			 : "rdi", "rsi", "rcx", "r11", "memory");
	return ret;
}

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 10;
	unsigned long fs;
	void *head;
	size_t len;
	if (syscall(SYS_arch_prctl, ARCH_GET_FS, &fs) != 0 || syscall(SYS_get_robust_list, 0, &head, &len) != 0)
		return 2;
	long sum = 0;
	for (int i = 0; i < n; i++)
		sum += raw(SYS_arch_prctl, ARCH_SET_FS, (long)fs) + raw(SYS_set_robust_list, (long)head, (long)len);
	printf("taken %ld, bad address %ld, bad size %ld, tls %d\n", sum, raw(SYS_arch_prctl, ARCH_SET_FS, 1L << 47),
	       raw(SYS_set_robust_list, (long)head, (long)len - 1), tls);
	return 0;
}
