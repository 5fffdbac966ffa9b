// What the conformance programs that check as they go share: CHECK ends the
// program with the failing line and condition, so that the test's "OK"
// never comes and the output says which check failed.
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c)                                                      \
	do {                                                              \
		if (!(c)) {                                                   \
			printf("FAIL line %d: %s\n", __LINE__, #c);               \
			exit(1);                                                  \
		}                                                             \
	} while (0)
