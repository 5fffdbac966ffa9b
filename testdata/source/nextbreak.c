/* next over calls with breakpoints in them: conditional ones stop when
 * they hold, ignore counts are spent, a step ending on a breakpoint's line
 * is its hit (gdb's answers, e2e/gdb_compare_test.go). */
#include <stdio.h>
__attribute__((noinline)) int g(int i) { return i * 2; }
__attribute__((noinline)) int h(int i) {
  int r = i + 1;
  return r;
}
int main(void) {
  int s = 0;
  for (int i = 0; i < 6; i++) {
    s += g(i);
    s += h(i);
  }
  printf("%d\n", s);
  return 0;
}
