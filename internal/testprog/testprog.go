// Package testprog builds and records the test programs of testdata/ for
// the tests of several packages: compile with gcc, record in-process.
// A test binary that records must call ptrace.MaybeRunHelper first in its
// TestMain (the recorder re-executes the test binary as its launcher).
package testprog

import (
	"debug/elf"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/record"
	"github.com/rewind-debugger/rewind/internal/testprog/cc"
)

// FixedEnv is the environment recordings get by default: fixed, so that
// stack addresses are the same on every machine.
var FixedEnv = []string{"PATH=/usr/bin:/bin"}

// ProgPathLen is the length of the path of every program RecordC records.
// The kernel copies that path (AT_EXECFN, and argv[0] here) onto the
// program's stack, so its length moves every stack address below, and with
// them the stack garbage a program finds; t.TempDir's length changes with
// TMPDIR, the test's name and a random number.
const ProgPathLen = 200

// progPath returns a path of length ProgPathLen for the program base in
// dir, creating the padding directory it needs.
func progPath(dir, base string) (string, error) {
	pad := ProgPathLen - len(dir) - len(base) - 2 // two slashes
	if pad < 1 || pad > 255 {
		return "", fmt.Errorf("testprog: %s is too long a directory to record %s from at a path of %d bytes (set TMPDIR to a shorter one)", dir, base, ProgPathLen)
	}
	sub := filepath.Join(dir, strings.Repeat("p", pad))
	if err := os.Mkdir(sub, 0o755); err != nil && !os.IsExist(err) {
		return "", err
	}
	return filepath.Join(sub, base), nil
}

// RecordC compiles the C program src (gcc -g -O0) into dir and records it
// with args and env (nil: FixedEnv), its output discarded. It returns the
// trace's path. The program runs from a path of ProgPathLen bytes.
func RecordC(dir, src string, env []string, args ...string) (string, error) {
	abs, err := filepath.Abs(src)
	if err != nil {
		return "", err
	}
	prog, err := progPath(dir, strings.TrimSuffix(filepath.Base(src), ".c"))
	if err != nil {
		return "", err
	}
	if err := cc.Compile(abs, prog, "-g", "-O0"); err != nil {
		return "", err
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return "", err
	}
	defer null.Close()
	if env == nil {
		env = FixedEnv
	}
	out := filepath.Join(dir, "t.rwd")
	if _, err := record.Record(record.Options{Path: prog, Args: append([]string{prog}, args...), Env: env,
		Dir: dir, Output: out, Warn: io.Discard, Stdin: null, Stdout: null, Stderr: null}); err != nil {
		return "", fmt.Errorf("recording %s: %w", src, err)
	}
	return out, nil
}

// TB is the part of testing.TB RecordCT needs.
type TB interface {
	Helper()
	TempDir() string
	Fatal(args ...any)
}

// RecordCT is RecordC for a test: a temporary directory, and a failure
// ends the test.
func RecordCT(t TB, src string, env []string, args ...string) string {
	t.Helper()
	trace, err := RecordC(t.TempDir(), src, env, args...)
	if err != nil {
		t.Fatal(err)
	}
	return trace
}

// onceDirs are the directories of the recordings made by Once, removed by
// Cleanup.
var (
	onceMu   sync.Mutex
	onceDirs []string
)

// Once returns a function that records the C program src (as RecordC,
// with FixedEnv) the first time it is called, into a temporary directory,
// and then returns the same trace: for the tests of a package that all
// read one recording. The test binary's TestMain calls Cleanup after its
// tests (Main does).
func Once(src string) func() (string, error) {
	return sync.OnceValues(func() (string, error) {
		dir, err := os.MkdirTemp("", "rewind-testprog-")
		if err != nil {
			return "", fmt.Errorf("recording %s: %w", src, err)
		}
		onceMu.Lock()
		onceDirs = append(onceDirs, dir)
		onceMu.Unlock()
		return RecordC(dir, src, nil)
	})
}

// Main is the TestMain of a test binary that records (m is its
// *testing.M): it runs the recorder's launcher when the binary was
// started as one, else the tests, then Cleanup.
func Main(m interface{ Run() int }) {
	ptrace.MaybeRunHelper()
	ColdCaches()
	code := m.Run()
	Cleanup()
	os.Exit(code)
}

// ColdCaches turns the user's caches off for the tests of this process and
// the rewind processes they start (REWIND_CACHE=off): a recording patches
// at once the sites that earlier ones learned, and a test that looks at
// which calls of a program's first process stop must see the same
// whatever ran before it. Tests of the caches set REWIND_CACHE themselves.
func ColdCaches() { os.Setenv("REWIND_CACHE", "off") }

// Cleanup removes the recordings made by Once.
func Cleanup() {
	onceMu.Lock()
	defer onceMu.Unlock()
	for _, dir := range onceDirs {
		os.RemoveAll(dir)
	}
	onceDirs = nil
}

// Symbol returns the address of symbol name in the (non-PIE) program prog,
// for tests that watch or break on a global by address.
func Symbol(t TB, prog, name string) uint64 {
	t.Helper()
	f, err := elf.Open(prog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name {
			return s.Value
		}
	}
	t.Fatal(fmt.Sprintf("no symbol %s in %s", name, prog))
	return 0
}
