// flags: -O2
// Code written at run time, as a JIT does: machine code with rdrand and
// rdseed is written into anonymous memory, which mprotect then makes
// executable; rewind patches it at the mprotect, so the values it returns
// are recorded and replay byte for byte. The memory is then unmapped and
// mapped again with other code (the old sites are forgotten).
#include <cpuid.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

// rdrand rax; jnc back; ret — then rdseed rcx; jnc back; mov rax,rcx; ret.
static const unsigned char code[] = {
    0x48, 0x0f, 0xc7, 0xf0, 0x73, 0xfa, 0xc3,                   // f1
    0x48, 0x0f, 0xc7, 0xf9, 0x73, 0xfa, 0x48, 0x89, 0xc8, 0xc3, // f2 at +7
};

int main(void) {
	unsigned a, b, c, d;
	int rdrand = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_RDRND);
	int rdseed = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_RDSEED);
	if (!rdrand || !rdseed) {
		printf("this CPU lacks rdrand or rdseed\nOK\n");
		return 0;
	}
	for (int round = 0; round < 2; round++) {
		unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return 1;
		memset(p, 0xcc, 4096);
		memcpy(p + 64 * round, code, sizeof code);
		if (mprotect(p, 4096, PROT_READ | PROT_EXEC) != 0)
			return 1;
		uint64_t (*f1)(void) = (uint64_t (*)(void))(p + 64 * round);
		uint64_t (*f2)(void) = (uint64_t (*)(void))(p + 64 * round + 7);
		uint64_t x = f1(), y = f2(), z = f1();
		printf("round %d: rdrand %016llx %016llx rdseed %016llx\n", round, (unsigned long long)x,
		       (unsigned long long)z, (unsigned long long)y);
		if (x == z)
			return 1;
		munmap(p, 4096);
	}
	printf("OK\n");
	return 0;
}
