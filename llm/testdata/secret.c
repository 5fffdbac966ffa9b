/* Prints secrets from its environment, then crashes with them in its
 * locals: the recording holds them in its header, in write() events, in
 * memory and in registers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	const char *secret = getenv("DEPLOY_SECRET");
	const char *db = getenv("DATABASE_URL");
	char line[128];
	snprintf(line, sizeof line, "secret=%s\n", secret);
	write(1, line, strlen(line));
	/* The secret starts at byte 24 of a buffer shown 32 bytes long. */
	snprintf(line, sizeof line, "a long prefix to pad 24:%s\n", secret);
	write(1, line, strlen(line));
	snprintf(line, sizeof line, "db=%s\n", db);
	write(1, line, strlen(line));
	volatile int *p = NULL;
	return *p;
}
