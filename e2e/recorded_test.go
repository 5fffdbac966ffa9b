package e2e

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRecordedElsewhere replays the recordings of testdata/recorded, made
// once on another machine (its README says which): each replays and
// verifies every event, re-emitting what the program printed there (the
// recording machine's cpuid answers among it); rewind why explains the
// crash with the sources packed in the trace; rewind info calls each
// portable.
func TestRecordedElsewhere(t *testing.T) {
	dir := filepath.Join(testdataDir, "recorded")
	for _, c := range []struct {
		trace string
		out   *regexp.Regexp // what the replay prints, the program's output
	}{
		{"corrupt.rwd", regexp.MustCompile(`^$`)},
		{"threads.rwd", regexp.MustCompile(`^count: 200\norder: [0-3]{200}\n$`)},
		{"cpuid.rwd", regexp.MustCompile(`^parent: \d+ cache levels, 100 rounds, vendor AuthenticAMD\nchild: \d+ cache levels, 10 rounds, vendor AuthenticAMD\n$`)},
	} {
		t.Run(strings.TrimSuffix(c.trace, ".rwd"), func(t *testing.T) {
			t.Parallel()
			trace := filepath.Join(dir, c.trace)
			stdout, stderr, code := replayCheck(t, trace)
			if code != 0 || !replayOKRE.Match(stderr) || !c.out.Match(stdout) {
				t.Errorf("replay --check: exit %d, stdout %q, want the recorded output and replay OK\n%s", code, stdout, tail(stderr))
			}
			info := run(t, runOpts{}, rewind(t), "info", trace)
			if !strings.Contains(string(info.Stdout), "portable:  yes") {
				t.Errorf("rewind info does not call it portable:\n%s", info.Stdout)
			}
		})
	}
	w := whyOf(t, filepath.Join(dir, "corrupt.rwd"))
	if w.Suspect < 0 {
		t.Fatalf("why corrupt: no suspicious write: %+v\n%s", w.Chain, w.Verdict)
	}
	l := w.Chain[w.Suspect]
	r := run(t, runOpts{}, rewind(t), "why", filepath.Join(dir, "corrupt.rwd"))
	if l.Function != "set_name" || !strings.Contains(l.Suspicion, "out of bounds") || !strings.Contains(string(r.Stdout), "n->name[i] = src[i];") {
		t.Errorf("why corrupt: suspect %+v, want set_name's overflow with its packed source line:\n%s", l, r.Stdout)
	}
}
