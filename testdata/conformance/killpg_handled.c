// The program sends signals to its whole process group, rewind included
// while it records: SIGTRAP, SIGINT, SIGTERM and SIGRTMIN, each caught by a
// handler. rewind must neither die (SIGTRAP and the first real-time signal
// end a Go program by default) nor take them for a Ctrl-C or a request to
// stop recording.
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t got[65];

static void on_signal(int sig) { got[sig]++; }

int main(void) {
	int sigs[] = {SIGTRAP, SIGINT, SIGTERM, SIGRTMIN, SIGINT};
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	for (int i = 0; i < 4; i++)
		sigaction(sigs[i], &sa, NULL);
	for (int i = 0; i < 5; i++) {
		kill(0, sigs[i]);
		usleep(100000); /* rewind would have ended the recording by now */
		printf("%s: %d\n", strsignal(sigs[i]), (int)got[sigs[i]]);
	}
	printf("OK\n");
	return 0;
}
