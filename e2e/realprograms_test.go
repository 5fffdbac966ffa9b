package e2e

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recordReal records a program nobody here wrote, checks that it exits and
// prints as its native run did, and that `replay --check` reproduces its
// output byte for byte. It returns the recording's path.
func recordReal(t *testing.T, opts runOpts, prog string, args ...string) string {
	t.Helper()
	need(t, prog)
	native := run(t, opts, prog, args...)
	trace := filepath.Join(t.TempDir(), filepath.Base(prog)+".rwd")
	r := recordOpts(t, opts, trace, prog, args...)
	if r.Code != native.Code {
		t.Fatalf("record exited %d, native %d\nstderr:\n%s", r.Code, native.Code, tail(r.Stderr))
	}
	if !bytes.Equal(r.Stdout, native.Stdout) {
		t.Fatalf("recorded stdout differs from the native run's: %s", firstDiff(native.Stdout, r.Stdout))
	}
	events, progStderr := checkRecorded(t, r.Stderr, trace, opts.Dir)
	stdout, stderr, code := replayCheck(t, trace)
	checkReplayed(t, events, r.Stdout, progStderr, stdout, stderr, code)
	return trace
}

// bigText writes a file of n bytes of random words, one line each, and
// returns its path.
func bigText(t *testing.T, n int) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(21, 40))
	var b bytes.Buffer
	b.Grow(n + 64)
	for b.Len() < n {
		fmt.Fprintf(&b, "%016x %d\n", rng.Uint64(), rng.IntN(1000))
	}
	path := filepath.Join(t.TempDir(), "big.txt")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRealBigReads records programs that read a 40 MB file in one call:
// `sort`, which reads its whole input at once, and Python's f.read(). Their
// recordings once kept only the first MiB of such a read and replayed other
// bytes (issue 21).
func TestRealBigReads(t *testing.T) {
	t.Parallel()
	rewind(t)
	file := bigText(t, 40<<20)
	t.Run("sort", func(t *testing.T) {
		t.Parallel()
		recordReal(t, runOpts{}, "sort", "-o", filepath.Join(t.TempDir(), "sorted"), file)
	})
	t.Run("python3", func(t *testing.T) {
		t.Parallel()
		recordReal(t, runOpts{}, "python3", "-c",
			"import hashlib,sys; d=open(sys.argv[1],'rb').read(); print(len(d), hashlib.sha256(d).hexdigest())", file)
	})
}

// TestRealMakeJobs records `make -j2` building a small C project: make
// waits for its jobs in pselect6 with SIGCHLD unblocked only there, which
// replay once got wrong at every run (issue 21).
func TestRealMakeJobs(t *testing.T) {
	t.Parallel()
	rewind(t)
	for _, tool := range []string{"make", "gcc"} {
		need(t, tool)
	}
	dir := t.TempDir()
	var objs []string
	for i := 1; i <= 6; i++ {
		src := fmt.Sprintf("int f%d(void) { return %d; }\n", i, i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.c", i)), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, fmt.Sprintf("f%d.o", i))
	}
	main := "#include <stdio.h>\nint main(void) { puts(\"built\"); return 0; }\n"
	mk := fmt.Sprintf("prog: %s main.o\n\tgcc -o $@ $^\n%%.o: %%.c\n\tgcc -c -o $@ $<\nclean:\n\trm -f *.o prog\n", strings.Join(objs, " "))
	for name, text := range map[string]string{"main.c": main, "Makefile": mk} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// recordReal runs it natively first: clean in between, so that the
	// recorded make builds everything again.
	native := run(t, runOpts{Dir: dir}, "make", "-j2", "--no-print-directory")
	if native.Code != 0 {
		t.Fatalf("native make exited %d:\n%s", native.Code, tail(native.Stderr))
	}
	run(t, runOpts{Dir: dir}, "make", "clean")
	trace := filepath.Join(t.TempDir(), "make.rwd")
	r := recordOpts(t, runOpts{Dir: dir}, trace, "make", "-j2", "--no-print-directory")
	if r.Code != 0 {
		t.Fatalf("recorded make exited %d:\n%s", r.Code, tail(r.Stderr))
	}
	if out := run(t, runOpts{Dir: dir}, filepath.Join(dir, "prog")); string(out.Stdout) != "built\n" {
		t.Fatalf("the recorded build's program prints %q", out.Stdout)
	}
	events, progStderr := checkRecorded(t, r.Stderr, trace, dir)
	stdout, stderr, code := replayCheck(t, trace)
	checkReplayed(t, events, r.Stdout, progStderr, stdout, stderr, code)
}
