package e2e

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWatchdogSaysWhatItWaitsFor records `cat` waiting for its standard
// input: once nothing happened for a few seconds, rewind says on stderr
// which thread waits in which call, and the recording goes on: the input
// that comes later is copied, and the recording replays (issue 21: no
// recording may sit there without a word).
func TestWatchdogSaysWhatItWaitsFor(t *testing.T) {
	t.Parallel()
	bin := rewind(t)
	cat := need(t, "cat")
	trace := filepath.Join(t.TempDir(), "cat.rwd")
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "record", "-o", trace, cat)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var said bytes.Buffer
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		said.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "blocked in read(0, ") {
			break
		}
	}
	if !strings.Contains(said.String(), "rewind: no event for") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("rewind never said what it waits for; stderr:\n%s", said.String())
	}
	io.WriteString(stdin, "hello\n")
	stdin.Close()
	rest, _ := io.ReadAll(stderr)
	said.Write(rest)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("record: %v\nstderr:\n%s", err, said.String())
	}
	if stdout.String() != "hello\n" {
		t.Errorf("cat copied %q, want %q", stdout.String(), "hello\n")
	}
	events, _ := checkRecorded(t, said.Bytes(), trace, "")
	out, errOut, code := replayCheck(t, trace)
	checkReplayed(t, events, stdout.Bytes(), nil, out, errOut, code)
}
