package debugger

import (
	"slices"
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"github.com/rewind-debugger/rewind/engine/trace"
)

func TestAssertOperands(t *testing.T) {
	for _, c := range []struct {
		expr string
		want []string
	}{
		{"counter == 2 * per_thread", []string{"counter", "per_thread"}},
		{"n->next != NULL && n->value > 0", []string{"n->next", "n->value"}},
		{"len(xs) == a.count", []string{"xs", "a.count"}},
		{"buf[i] == 'x' && strcmp(name, \"a b\") == 0", []string{"buf[i]", "name"}},
		{"sizeof(x) == 4", []string{"x"}},
	} {
		if got := assertOperands(c.expr); !slices.Equal(got, c.want) {
			t.Errorf("assertOperands(%q) = %q, want %q", c.expr, got, c.want)
		}
	}
}

func TestFailureText(t *testing.T) {
	for _, c := range []struct{ name, msg, want string }{
		{"go test", "=== RUN TestA\n--- FAIL: TestAverage (0.00s)\n    fails_test.go:16: average = 3, want 4\nFAIL\n",
			"--- FAIL: TestAverage (0.00s) / fails_test.go:16: average = 3, want 4"},
		{"pytest", "=== FAILURES ===\n___ test_average ___\nE assert 3 == 4\nFAILED t.py::test_average - assert 3 == 4\n1 failed\n",
			"FAILED t.py::test_average - assert 3 == 4"},
		{"rust", "thread 'main' (1) panicked at src/main.rs:25:22:\nindex out of bounds\nnote: run with RUST_BACKTRACE=1\n",
			"thread 'main' (1) panicked at src/main.rs:25:22: / index out of bounds"},
		{"c assert", "prog: a.c:30: main: Assertion `x == 1' failed.\n", "prog: a.c:30: main: Assertion `x == 1' failed."},
		{"nothing telling", "hello\nbye\n", "bye"},
	} {
		if got := failureText(c.msg); got != c.want {
			t.Errorf("%s: failureText = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestRegIndex(t *testing.T) {
	for _, c := range []struct {
		reg  x86asm.Reg
		want string
	}{
		{x86asm.RAX, "rax"}, {x86asm.EAX, "rax"}, {x86asm.AX, "rax"}, {x86asm.AL, "rax"}, {x86asm.AH, "rax"},
		{x86asm.R15, "r15"}, {x86asm.R9L, "r9"}, {x86asm.R10W, "r10"}, {x86asm.SIB, "rsi"}, {x86asm.BH, "rbx"},
		{x86asm.RSP, "rsp"}, {x86asm.R8B, "r8"},
	} {
		i, ok := regIndex(c.reg)
		if !ok || trace.RegNames[i] != c.want {
			t.Errorf("regIndex(%v) = %d (%v), want %s", c.reg, i, ok, c.want)
		}
	}
	if _, ok := regIndex(x86asm.X0); ok {
		t.Error("regIndex(X0): a vector register is no general one")
	}
}
