/* finish values of every ABI class: a struct of two words (rax, rdx), a
 * double and an int (xmm0, rax), floats packed in one eightbyte, a struct
 * in memory (its address in rax), a small struct, a double; and a float
 * argument's entry value (x=x@entry=2) at -O2 (e2e/gdb_compare_test.go). */
#include <stdio.h>
struct two { long a, b; };
struct mix { double d; int i; };
struct big { long x[5]; };
struct fl { float f, g; double h; };
struct small { char c; short s; };
__attribute__((noinline)) struct two mk2(long a) { struct two t = {a, a * 2}; return t; }
__attribute__((noinline)) struct mix mkm(int i) { struct mix m = {i / 2.0, i}; return m; }
__attribute__((noinline)) struct big mkb(long v) { struct big b = {{v, v + 1, v + 2, v + 3, v + 4}}; return b; }
__attribute__((noinline)) struct fl mkf(float f) { struct fl x = {f, f * 2, f * 3}; return x; }
__attribute__((noinline)) struct small mks(char c) { struct small x = {c, 300}; return x; }
__attribute__((noinline)) double dbl(double x) { return x * 1.5; }
int main(void) {
  struct two t = mk2(5);
  struct mix m = mkm(7);
  struct big b = mkb(9);
  struct fl f = mkf(1.5f);
  struct small s = mks('x');
  double d = dbl(2);
  printf("%ld %f %ld %f %d %f\n", t.b, m.d, b.x[4], f.h, s.s, d);
  return 0;
}
