package fuzzrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// targets are the project's fuzz targets, by package directory (from the
// module's root), the longest first. -fuzztime counts the run of the seeds
// too, so a target whose seeds replay the recording gets more of it.
var targets = []struct {
	dir, name string
	scale     time.Duration
}{
	{"debugger", "FuzzCommand", 2},
	{"mcpserver", "FuzzServerLines", 1},
	{"engine/trace", "FuzzReader", 1},
	{"debugger/expr", "FuzzExpr", 1},
}

// defaultFuzzTime is a target's time when REWIND_FUZZTIME is not set: long
// enough to try thousands of inputs beyond the seeds, short enough that
// the targets, two at a time, fit in about 40 s with their builds.
const defaultFuzzTime = 8 * time.Second

// fuzzTime reads REWIND_FUZZTIME: seconds, or a Go duration.
func fuzzTime() (time.Duration, error) {
	v := os.Getenv("REWIND_FUZZTIME")
	if v == "" {
		return defaultFuzzTime, nil
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("REWIND_FUZZTIME=%q: want seconds or a duration such as 30s", v)
	}
	return d, nil
}

// goTool is the go command of the toolchain running the tests.
func goTool() (string, error) {
	if root := runtime.GOROOT(); root != "" {
		if p := filepath.Join(root, "bin", "go"); fileExists(p) {
			return p, nil
		}
	}
	p, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("no go command: %w", err)
	}
	return p, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// failingInput finds where the fuzzer saved the input that failed.
var failingInput = regexp.MustCompile(`Failing input written to (testdata/fuzz/\S+)`)

// TestFuzz fuzzes each target for a bounded time (go test -fuzz, in the
// target's package) and fails with the fuzzer's report and the failing
// input. The fuzzer's corpus goes to a temporary directory, and a failing
// input it saves in the package's testdata is removed once reported, so
// that a run leaves the tree as it was.
func TestFuzz(t *testing.T) {
	if testing.Short() {
		t.Skip("fuzzing is skipped in -short mode")
	}
	d, err := fuzzTime()
	if err != nil {
		t.Fatal(err)
	}
	if d == 0 {
		t.Skip("REWIND_FUZZTIME=0")
	}
	goCmd, err := goTool()
	if err != nil {
		t.Skip(err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			// Two at a time on two cores (-parallel defaults to GOMAXPROCS),
			// each with one fuzzing worker.
			t.Parallel()
			fuzz(t, goCmd, filepath.Join(root, tg.dir), tg.name, tg.scale*d)
		})
	}
}

// fuzz runs one target in dir for d.
func fuzz(t *testing.T, goCmd, dir, name string, d time.Duration) {
	// The build and the setup of the target (a recording, a session) come
	// on top of d.
	ctx, cancel := context.WithTimeout(context.Background(), d+5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goCmd, "test", "-run=^$", "-fuzz=^"+name+"$",
		"-fuzztime="+d.String(), "-fuzzminimizetime=100x", "-parallel=1",
		"-test.fuzzcachedir="+t.TempDir(), ".")
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err == nil {
		t.Log(lastStats(out.String()))
		return
	}
	report := lastLines(out.String(), 60)
	m := failingInput.FindStringSubmatch(out.String())
	if m == nil && ctx.Err() == nil && coordinatorRace.MatchString(out.String()) {
		// Go 1.26's fuzzing coordinator can report its own -fuzztime
		// deadline as a failure when a worker is still busy at that
		// moment (a loaded machine): golang/go#75804, fixed in Go 1.27.
		// No input failed, and none was written.
		t.Logf("go test -fuzz=%s: the coordinator's end-of-time race (golang/go#75804), not a failing input\n%s", name, lastStats(out.String()))
		return
	}
	if m != nil {
		input, rerr := takeInput(dir, m[1])
		if rerr != nil {
			report += "\n" + rerr.Error()
		} else {
			report += "\nfailing input (" + m[1] + ", removed; add it back to make it a seed):\n" + input
		}
	}
	if ctx.Err() != nil {
		err = errors.Join(err, ctx.Err())
	}
	t.Errorf("go test -fuzz=%s in %s: %v\n%s", name, dir, err, report)
}

// coordinatorRace is the whole failure report of golang/go#75804: the
// target's FAIL line followed by the fuzzing deadline, nothing else.
var coordinatorRace = regexp.MustCompile(`(?m)^--- FAIL: Fuzz\w+ \([0-9.]+s\)\n\s+context deadline exceeded\n`)

// takeInput reads and removes a failing input the fuzzer saved under
// dir, and the testdata directories it created if nothing else is left in
// them.
func takeInput(dir, rel string) (string, error) {
	p := filepath.Join(dir, filepath.FromSlash(rel))
	b, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("reading the failing input: %w", err)
	}
	if err := os.Remove(p); err != nil {
		return "", fmt.Errorf("removing the failing input: %w", err)
	}
	// Remove fails on a directory that is not empty: a corpus already
	// there stays.
	for p = filepath.Dir(p); p != dir; p = filepath.Dir(p) {
		if os.Remove(p) != nil {
			break
		}
	}
	return string(b), nil
}

// lastStats returns the fuzzer's last line of statistics.
func lastStats(s string) string {
	last := ""
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, "fuzz: elapsed") {
			last = line
		}
	}
	return last
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
