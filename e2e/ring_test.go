package e2e

// Recording a running service into a ring buffer (--keep-last): only
// the last minutes are kept, from a snapshot of the process.

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// cpusAllowed is this process's Cpus_allowed_list: what the services the
// tests start inherit.
func cpusAllowed(t *testing.T) string {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Cpus_allowed_list:\t(\S+)`).FindSubmatch(data)
	if m == nil {
		t.Fatal("no Cpus_allowed_list in /proc/self/status")
	}
	return string(m[1])
}

func TestRingBuffer(t *testing.T) {
	// Ten seconds of ticks (one every 50 ms) kept in a ring of one
	// second: the trace ends with the last ticks and starts from a
	// snapshot long after the first; the disk holds four segments at most,
	// whatever the length of the run.
	bin := buildC(t, "ticks.c")
	dir := t.TempDir()
	trace := filepath.Join(dir, "ring.rwd")
	cmd := exec.Command(rewind(t), "record", "--keep-last", "1s", "-o", trace, bin, "200")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderrWriter{&stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	most := 0
	for sc.Scan() {
		// A segment being written is its reserved name and a
		// .partial file: count segments, not files.
		segs, _ := filepath.Glob(trace + ".segment-*")
		names := map[string]bool{}
		for _, s := range segs {
			names[strings.SplitN(filepath.Base(s), ".", 4)[2]] = true
		}
		most = max(most, len(names))
		if sc.Text() == "tick 200" {
			break
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	io.Copy(io.Discard, out)
	cmd.Wait()
	if most > 4 {
		t.Errorf("%d segments on disk at once: the ring must keep at most 4", most)
	}
	if left, _ := filepath.Glob(trace + ".segment-*"); len(left) > 0 {
		t.Errorf("segment files left after the recording: %v", left)
	}
	replayed, errOut, code := replayCheck(t, trace)
	if code != 0 {
		t.Fatalf("replay --check: status %d\n%s\n%s", code, errOut, stderr.String())
	}
	got := string(replayed)
	if !strings.Contains(got, "tick 200\n") || strings.Contains(got, "tick 1\n") || strings.Contains(got, "tick 100\n") {
		t.Errorf("the ring of 1s should hold the last ticks only; replay wrote:\n%s", got)
	}
	events := run(t, runOpts{}, rewind(t), "events", trace)
	if first := strings.SplitN(string(events.Stdout), "\n", 2)[0]; !strings.Contains(first, "where the ring buffer kept it from") {
		t.Errorf("the trace does not start from the ring's snapshot: %s", first)
	}
	batch := run(t, runOpts{}, rewind(t), "replay", "--batch", "-ex", "break ticks.c:12", "-ex", "continue", "-ex", "print i", "-ex", "reverse-continue", "-ex", "print i", trace)
	if !regexp.MustCompile(`\$1 = (1[5-9]\d|200)\b`).Match(batch.Stdout) {
		t.Errorf("break and print in the kept window:\n%s%s", batch.Stdout, batch.Stderr)
	}
}

// stderrWriter feeds a syncBuffer from a command's stderr.
type stderrWriter struct{ b *syncBuffer }

func (w *stderrWriter) Write(p []byte) (int, error) {
	w.b.WriteString(string(p))
	return len(p), nil
}

// TestRingBufferShortRun: a recording that ends within the ring's window
// is its one segment whole, execs and all: it replays with the program's
// output (each exec's image names its files and bytes by blob, which the
// join renumbers).
func TestRingBufferShortRun(t *testing.T) {
	t.Parallel()
	trace := filepath.Join(t.TempDir(), "short.rwd")
	r := recordOpts(t, runOpts{RecordFlags: []string{"--keep-last", "1m"}}, trace, "/bin/sh", "-c", "/bin/true; /bin/echo kept; /bin/true")
	if r.Code != 0 || string(r.Stdout) != "kept\n" {
		t.Fatalf("record --keep-last: exit %d, stdout %q\n%s", r.Code, r.Stdout, tail(r.Stderr))
	}
	wantReplayed(t, trace, "kept\n")
}
