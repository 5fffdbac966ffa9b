/* Two signals a debugger stops at: a SIGSEGV at a known address (0x1234),
 * which a handler survives, then a SIGABRT from abort(). */
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>

static sigjmp_buf env;

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(env, 1);
}

int main(void)
{
	signal(SIGSEGV, on_segv);
	if (!sigsetjmp(env, 1)) {
		volatile int *p = (int *)0x1234;
		*p = 1;
	}
	abort();
}
