// flags: -ldl
// The vDSO used directly: found with getauxval(AT_SYSINFO_EHDR), its ELF
// parsed (dynamic symbols, versions ignored) and its clock_gettime,
// gettimeofday, time and getcpu called through the pointers found, then
// dlopen("linux-vdso.so.1") and dlsym as programs do. rewind keeps the vDSO
// visible and patches each function into the real system call, so every
// value printed here is recorded and replays byte for byte.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

// vdso_sym looks name up in the vDSO mapped at base, through its section
// headers (the vDSO is one page-aligned image holding them).
static void *vdso_sym(uintptr_t base, const char *name) {
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
		return NULL;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff);
	uintptr_t load = 0;
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD) {
			load = base - ph[i].p_vaddr;
			break;
		}
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(base + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_DYNSYM)
			continue;
		const Elf64_Sym *syms = (const Elf64_Sym *)(base + sh[i].sh_offset);
		const char *strs = (const char *)(base + sh[sh[i].sh_link].sh_offset);
		size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
		for (size_t j = 0; j < n; j++)
			if (ELF64_ST_TYPE(syms[j].st_info) == STT_FUNC && syms[j].st_shndx != SHN_UNDEF &&
			    strcmp(strs + syms[j].st_name, name) == 0)
				return (void *)(load + syms[j].st_value);
	}
	return NULL;
}

static long long ns(const struct timespec *ts) { return ts->tv_sec * 1000000000LL + ts->tv_nsec; }

int main(void) {
	uintptr_t base = getauxval(AT_SYSINFO_EHDR);
	if (base == 0) {
		printf("no vDSO in auxv\n");
		return 1;
	}
	int (*vgettime)(clockid_t, struct timespec *) = vdso_sym(base, "__vdso_clock_gettime");
	int (*vgettimeofday)(struct timeval *, struct timezone *) = vdso_sym(base, "__vdso_gettimeofday");
	time_t (*vtime)(time_t *) = vdso_sym(base, "__vdso_time");
	long (*vgetcpu)(unsigned *, unsigned *, void *) = vdso_sym(base, "__vdso_getcpu");
	if (!vgettime || !vgettimeofday || !vtime || !vgetcpu) {
		printf("vDSO symbols missing: clock_gettime %p gettimeofday %p time %p getcpu %p\n", (void *)vgettime,
		       (void *)vgettimeofday, (void *)vtime, (void *)vgetcpu);
		return 1;
	}

	// The vDSO's clock agrees with the kernel's, between two of its reads.
	struct timespec a, k, b;
	if (vgettime(CLOCK_MONOTONIC, &a) != 0 || syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &k) != 0 ||
	    vgettime(CLOCK_MONOTONIC, &b) != 0) {
		printf("clock_gettime failed\n");
		return 1;
	}
	printf("vdso monotonic: %lld %lld %lld\n", ns(&a), ns(&k), ns(&b));
	if (ns(&a) > ns(&k) || ns(&k) > ns(&b)) {
		printf("the vDSO's monotonic clock is out of order with the system call's\n");
		return 1;
	}
	struct timespec rt;
	vgettime(CLOCK_REALTIME, &rt);
	struct timeval tv;
	vgettimeofday(&tv, NULL);
	time_t t1 = vtime(NULL), t2;
	vtime(&t2);
	printf("vdso realtime: %lld gettimeofday: %lld.%06ld time: %lld %lld\n", ns(&rt), (long long)tv.tv_sec,
	       (long)tv.tv_usec, (long long)t1, (long long)t2);
	// time() reads the seconds of the last clock tick: just past a second
	// it may still say the one before.
	if (tv.tv_sec < rt.tv_sec || t1 + 1 < rt.tv_sec || t2 < t1 || t2 > tv.tv_sec + 1) {
		printf("the vDSO's wall clocks disagree\n");
		return 1;
	}
	unsigned cpu = ~0u, node = ~0u;
	if (vgetcpu(&cpu, &node, NULL) != 0 || cpu >= (unsigned)sysconf(_SC_NPROCESSORS_CONF)) {
		printf("getcpu: cpu %u node %u of %ld\n", cpu, node, sysconf(_SC_NPROCESSORS_CONF));
		return 1;
	}
	printf("vdso getcpu: cpu %u node %u\n", cpu, node);

	// The loader knows the vDSO by its soname.
	void *h = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!h) {
		printf("dlopen(linux-vdso.so.1): %s\n", dlerror());
		return 1;
	}
	int (*dgettime)(clockid_t, struct timespec *) = (int (*)(clockid_t, struct timespec *))dlsym(h, "__vdso_clock_gettime");
	if (dgettime != vgettime) {
		printf("dlsym found __vdso_clock_gettime at %p, the ELF at %p\n", (void *)dgettime, (void *)vgettime);
		return 1;
	}
	struct timespec c;
	dgettime(CLOCK_MONOTONIC, &c);
	printf("dlsym monotonic: %lld\n", ns(&c));
	if (ns(&c) < ns(&b)) {
		printf("the monotonic clock went back\n");
		return 1;
	}
	printf("OK\n");
	return 0;
}
