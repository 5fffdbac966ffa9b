// Turns on syscall user dispatch (with its selector allowing every call),
// which rewind cannot replay: the recording warns and replay stops there.
#include <stdio.h>
#include <sys/prctl.h>

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#define PR_SYS_DISPATCH_OFF 0
#define PR_SYS_DISPATCH_ON 1
#endif

static volatile char selector = 0; // SYSCALL_DISPATCH_FILTER_ALLOW

int main(void) {
	printf("before\n");
	fflush(stdout);
	int on = prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, 0, 0, &selector);
	int off = prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0);
	printf("on %d off %d\n", on, off);
	return 0;
}
