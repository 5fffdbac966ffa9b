/* A watchpoint on a local ends with its frame (gdb's "Watchpoint N deleted
 * because the program has left the block..."): at f's return, and at a
 * recursive call's own return, not at an inner call's. */
#include <stdio.h>

int g;

int f(int n) {
  int local = 0;
  for (int i = 0; i < n; i++)
    local += i;
  g = local;
  return local;
}

int depth(int n) {
  int here = n;
  if (n > 0)
    here += depth(n - 1);
  return here;
}

int main(void) {
  int a = f(3);
  int b = f(4);
  int c = depth(3);
  printf("%d %d %d\n", a, b, c);
  return 0;
}
