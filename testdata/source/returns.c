// Functions returning pointers: finish prints their values as gdb does,
// the pointer type first except for strings.
#include <stdio.h>
#include <stdlib.h>
struct node { int v; };
static char buf[16];
__attribute__((noinline)) void *raw(void) { return buf; }
__attribute__((noinline)) struct node *mk(void) { static struct node n = {7}; return &n; }
__attribute__((noinline)) const char *name(void) { return "hello"; }
int main(void) {
	printf("%p %d %s\n", raw(), mk()->v, name());
	return 0;
}
