// flags: -O2 -mrdrnd -mrdseed
// rdrand and rdseed, which cpuid shows where rewind cannot trap cpuid:
// rewind patches each into a trap, emulates it and logs the value, so the
// values printed here replay byte for byte. The intrinsics at every operand
// size (a 16-bit destination keeps its register's upper bits), rdrand into
// r8-r15 (a REX prefix), a retry loop on CF as programs write them, and the
// detection paths programs use first: cpuid and __builtin_cpu_supports.
#include <cpuid.h>
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/auxv.h>

// rdseed can fail when the entropy source is drained: programs retry.
static uint64_t seed64(void) {
	unsigned long long v;
	int tries = 0;
	while (!_rdseed64_step(&v)) {
		if (++tries > 1000000)
			return 0;
		__builtin_ia32_pause();
	}
	return v;
}

static uint64_t rand64(void) {
	unsigned long long v;
	while (!_rdrand64_step(&v))
		;
	return v;
}

int main(void) {
	unsigned a, b, c, d;
	int has_rdrand = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_RDRND);
	int has_rdseed = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_RDSEED);
	__builtin_cpu_init();
	if (has_rdrand != !!__builtin_cpu_supports("rdrnd")) {
		printf("cpuid and __builtin_cpu_supports disagree on rdrand\n");
		return 1;
	}
	// On x86 the hardware capabilities in auxv are cpuid leaf 1's edx; the
	// random number instructions are only in cpuid.
	printf("AT_HWCAP %#lx\n", getauxval(AT_HWCAP));
	if (!has_rdrand) {
		printf("this CPU has no rdrand\nOK\n");
		return 0;
	}

	uint64_t r[4];
	for (int i = 0; i < 4; i++)
		r[i] = rand64();
	printf("rdrand64: %016llx %016llx %016llx %016llx\n", (unsigned long long)r[0], (unsigned long long)r[1],
	       (unsigned long long)r[2], (unsigned long long)r[3]);
	if (r[0] == r[1] && r[1] == r[2] && r[2] == r[3]) {
		printf("rdrand64 returned the same value four times\n");
		return 1;
	}

	unsigned int v32;
	int ok32 = _rdrand32_step(&v32);
	printf("rdrand32: ok %d %08x\n", ok32, v32);

	// A 16-bit destination writes only the low 16 bits of its register.
	uint64_t wide = 0x1122334455660000ull;
	unsigned char cf;
	__asm__ volatile("rdrand %w0; setc %1" : "+r"(wide), "=qm"(cf));
	printf("rdrand16: cf %d low %04llx\n", cf, (unsigned long long)(wide & 0xffff));
	if ((wide >> 16) != 0x112233445566ull) {
		printf("a 16-bit rdrand changed the upper bits: %016llx\n", (unsigned long long)wide);
		return 1;
	}

	// A destination among r8-r15 needs REX.B.
	uint64_t hi;
	__asm__ volatile("1: rdrand %%r9; jnc 1b; mov %%r9, %0" : "=r"(hi) : : "r9", "cc");
	printf("rdrand r9: %016llx\n", (unsigned long long)hi);

	if (has_rdseed) {
		printf("rdseed64: %016llx %016llx\n", (unsigned long long)seed64(), (unsigned long long)seed64());
		unsigned short s16;
		while (!_rdseed16_step(&s16))
			;
		printf("rdseed16: %04x\n", s16);
	}
	printf("OK\n");
	return 0;
}
