package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stressRuns is how many times TestStressPipeStdin records and replays its
// C program.
const stressRuns = 50

// stackMovingRewind returns a rewind binary whose own packages move their
// goroutine's stack at every function entry (the compiler's maymorestack
// hook, with which the Go runtime tests itself). A Go pointer that reaches
// the kernel as a plain uintptr through a function call goes stale when the
// stack moves in between; the garbage collector moves stacks rarely and at
// random, this binary at every call. With REWIND_E2E_BIN set, that binary
// is used as it is.
func stackMovingRewind(t *testing.T) string {
	t.Helper()
	if os.Getenv("REWIND_E2E_BIN") != "" {
		t.Log("REWIND_E2E_BIN is set: stack moves are not forced")
		return rewind(t)
	}
	rewind(t) // the plain build failing says why better than this one
	out := filepath.Join(workDir, "bin", "stackmoves", "rewind")
	return cachedBuild(t, "rewind maymorestack", out, func(out string) error {
		return compile("go", moduleRoot, "build",
			"-gcflags=github.com/rewind-debugger/rewind/...=-d=maymorestack=runtime.mayMoreStackMove",
			"-o", out, "github.com/rewind-debugger/rewind")
	})
}

// sumInput is the standard input of the stress runs: `seq 100`.
func sumInput() []byte {
	var b strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintln(&b, i)
	}
	return []byte(b.String())
}

// TestStressPipeStdin is issue 10, point 7: about one recording in five of
// `seq 100 | rewind record python3 -c 'import sys; print(sum(int(l) for l
// in sys.stdin))'` failed, at record or at replay, with `ptrace setregs tid
// N: input/output error`. Register buffers on the Go stack were handed to
// the kernel as uintptrs made before a function call; when the stack moved
// at that call, GETREGS filled the stack's old copy, the registers stayed
// zero, and writing them back was refused (cs 0). A program summing a pipe
// is recorded and replayed 50 times by a rewind whose stack moves at every
// call, and python3 itself once.
func TestStressPipeStdin(t *testing.T) {
	t.Parallel()
	bin := stackMovingRewind(t)
	in := sumInput()
	recordAndCheck := func(t *testing.T, want string, prog string, args ...string) {
		trace := filepath.Join(t.TempDir(), "t.rwd")
		r := run(t, runOpts{Stdin: in}, bin, append([]string{"record", "-o", trace, "--", prog}, args...)...)
		if r.Code != 0 {
			t.Fatalf("record exited %d, want 0\nstderr:\n%s", r.Code, tail(r.Stderr))
		}
		events, progStderr := checkRecorded(t, r.Stderr, trace, "")
		if string(r.Stdout) != want {
			t.Fatalf("recorded stdout %q, want %q", r.Stdout, want)
		}
		rep := run(t, runOpts{}, bin, "replay", "--check", trace)
		checkReplayed(t, events, r.Stdout, progStderr, rep.Stdout, rep.Stderr, rep.Code)
	}

	t.Run("c", func(t *testing.T) {
		prog := buildC(t, "pipesum.c")
		want := "sum: 5050\nchild: exit 7\nsigchld handled: 1\nrdtsc: increasing\n"
		for i := 1; i <= stressRuns; i++ {
			if !t.Run(fmt.Sprintf("run%02d", i), func(t *testing.T) { recordAndCheck(t, want, prog) }) {
				break // the first failure says it all
			}
		}
	})
	t.Run("python3", func(t *testing.T) {
		need(t, "python3")
		recordAndCheck(t, "5050\n", "python3", "-c", "import sys; print(sum(int(l) for l in sys.stdin))")
	})
}
