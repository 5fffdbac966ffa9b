// jitwx.c: code written into memory that is writable and executable from
// the start (the mapping is scanned when it is made, empty): rewind warns
// at record time that an rdrand written there later is not patched. The
// code runs rdrand and drops its value, so the replay still holds.
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

// rdrand rax; xor eax,eax; ret
static const unsigned char code[] = {0x48, 0x0f, 0xc7, 0xf0, 0x31, 0xc0, 0xc3};

int main(void) {
	unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memcpy(p, code, sizeof code);
	int (*f)(void) = (int (*)(void))p;
	printf("jit returned %d\n", f());
	return 0;
}
