// What the jobctl_*.c programs that stop and continue a child share: the
// child in a process group of its own, as a shell starts a job.
#include <sys/types.h>
#include <unistd.h>

// fork_job forks a child that runs child, which must not return, in a
// process group of its own, and returns its pid. Both sides set the group,
// as shells do, so that it exists whichever runs first.
static pid_t fork_job(void (*child)(void)) {
	pid_t c = fork();
	if (c == 0) {
		setpgid(0, 0);
		child();
	}
	setpgid(c, c);
	return c;
}
