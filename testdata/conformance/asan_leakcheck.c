// flags: -fsanitize=address -g
// AddressSanitizer's leak check stops the world with ptrace: it starts a
// tracer task (clone with CLONE_UNTRACED) that attaches to every thread of
// the program, waits for their stops, reads their registers (GETREGSET)
// and detaches. Under a tracer that does not emulate ptrace it fails with
// "LeakSanitizer has encountered a fatal error" (and exit status 1). Here a
// check finds one leak made on purpose (a pointer hidden from it), then,
// the pointer visible again, the check at exit finds none.
#include <sanitizer/lsan_interface.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile uintptr_t hidden; // the block's address, disguised

int main(void) {
	setvbuf(stdout, NULL, _IONBF, 0);
	char *p = malloc(100);
	memset(p, 'x', 100);
	hidden = (uintptr_t)p ^ 0x5a5a5a5a5a5a5a5aUL;
	p = NULL;
	int leaks = __lsan_do_recoverable_leak_check();
	printf("leaks found: %d\n", leaks);
	char *back = (char *)(hidden ^ 0x5a5a5a5a5a5a5a5aUL);
	printf("block intact: %d\n", back[99] == 'x');
	free(back);
	if (leaks != 1)
		return 1;
	printf("OK\n");
	return 0;
}
