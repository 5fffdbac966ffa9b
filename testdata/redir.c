/* Output whose file descriptors move: a write to fd 1 while it is
 * /dev/null must not be taken for the program's output. */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
int main(void) {
	write(1, "one\n", 4);
	int saved = dup(1);
	int null = open("/dev/null", O_WRONLY);
	dup2(null, 1);
	write(1, "hidden\n", 7);
	dup2(saved, 1);
	write(1, "two\n", 4);
	close(1);
	write(2, "three\n", 6);
	return 0;
}
