// jitcpuid.c: asks cpuid from code it writes at run time, as a JIT does
// (the JVM generates its cpuid stub): the code is written into executable
// memory after the last system call before it runs, so that a breakpoint
// set on the instruction before it is written would be overwritten.
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

int main(void) {
	// push rbx; mov eax,edi; xor ecx,ecx; cpuid; mov eax,ebx; pop rbx; ret
	static const unsigned char code[] = {0x53, 0x89, 0xf8, 0x31, 0xc9, 0x0f, 0xa2, 0x89, 0xd8, 0x5b, 0xc3};
	unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 1;
	memcpy(page, code, sizeof code);
	unsigned (*ebx_of)(unsigned) = (unsigned (*)(unsigned))page;
	unsigned b = ebx_of(0);
	char vendor[5];
	memcpy(vendor, &b, 4);
	vendor[4] = 0;
	printf("vendor starts %s\n", vendor);
	return 0;
}
