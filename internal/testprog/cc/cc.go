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
}

// Build compiles src into out with flags (before "-o out src"): g++ for
// C++ sources (.cc, .cpp, .cxx), gcc for the others. A program that does
// not compile fails the test with the compiler's output. It returns out.
func Build(t TB, src, out string, flags ...string) string {
	t.Helper()
	if err := Compile(src, out, flags...); err != nil {
		t.Fatalf("%v", err)
	}
	return out
}

// Compile is Build for code outside a test: the error says the command
// and holds the compiler's output.
func Compile(src, out string, flags ...string) error {
	compiler := "gcc"
	for _, ext := range []string{".cc", ".cpp", ".cxx"} {
		if strings.HasSuffix(src, ext) {
			compiler = "g++"
		}
	}
	if _, err := exec.LookPath(compiler); err != nil {
		return fmt.Errorf("%s is not installed: %w", compiler, err)
	}
	args := append(append(append([]string(nil), flags...), "-o", out), src)
	if msg, err := exec.Command(compiler, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", compiler, strings.Join(args, " "), err, msg)
	}
	return nil
}
