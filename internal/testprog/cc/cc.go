// Package cc compiles the C and C++ programs of testdata/ for the tests of
// every package. It imports nothing of rewind's, so that the packages
// testprog itself depends on (the engine's) can use it in their tests too.
package cc

import (
	"fmt"
	"os/exec"
	"strings"
)

// TB is the part of testing.TB Build needs.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
}

// For is the compiler of src: g++ for C++ sources (.cc, .cpp, .cxx), gcc
// for the others.
func For(src string) string {
	for _, ext := range []string{".cc", ".cpp", ".cxx"} {
		if strings.HasSuffix(src, ext) {
			return "g++"
		}
	}
	return "gcc"
}

// Build compiles src into out with For(src) and flags (before "-o out
// src"). gcc and g++ are required by the tests: one missing, or a program
// that does not compile, fails the test with the reason. It returns out.
func Build(t TB, src, out string, flags ...string) string {
	t.Helper()
	if err := Compile(src, out, flags...); err != nil {
		t.Fatalf("%v", err)
	}
	return out
}

// BuildWith is Build with the compiler named (clang, say); one that is
// not installed skips the test, as an optional package must.
func BuildWith(t TB, compiler, src, out string, flags ...string) string {
	t.Helper()
	if _, err := exec.LookPath(compiler); err != nil {
		t.Skipf("%s is not installed: %v", compiler, err)
	}
	if err := CompileWith(compiler, src, out, flags...); err != nil {
		t.Fatalf("%v", err)
	}
	return out
}

// Compile is Build for code outside a test: the error says the command
// and holds the compiler's output.
func Compile(src, out string, flags ...string) error {
	return CompileWith(For(src), src, out, flags...)
}

// CompileWith is Compile with the compiler named.
func CompileWith(compiler, src, out string, flags ...string) error {
	if _, err := exec.LookPath(compiler); err != nil {
		return fmt.Errorf("%s is not installed: %w", compiler, err)
	}
	args := append(append(append([]string(nil), flags...), "-o", out), src)
	if msg, err := exec.Command(compiler, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", compiler, strings.Join(args, " "), err, msg)
	}
	return nil
}
