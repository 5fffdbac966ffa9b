package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestCIRecipeGo runs the CI recipe of docs/ci.md on a Go module: go test
// runs each package's test binary under rewind record --keep-on-failure,
// the recordings go to $REWIND_TRACE_DIR, only the failing packages' stay,
// and rewind why explains each: a nil dereference in bump followed to its
// fault, the failed check of fails reported at its line.
func TestCIRecipeGo(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not installed")
	}
	traces := t.TempDir()
	cmd := exec.Command(goTool, "test", "-count=1", "-exec", rewind(t)+" record --keep-on-failure --",
		"-ldflags=-s=false -w=false", "-gcflags=all=-N -l", "./citest/...")
	cmd.Dir = filepath.Join(testdataDir, "go")
	cmd.Env = append(os.Environ(), "REWIND_TRACE_DIR="+traces)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("go test passed, want the failures of bump and fails:\n%s", out)
	}
	entries, _ := os.ReadDir(traces)
	var kept []string
	for _, e := range entries {
		kept = append(kept, e.Name())
	}
	slices.Sort(kept)
	if want := []string{"bump.test-1.rwd", "fails.test-1.rwd"}; !slices.Equal(kept, want) {
		t.Fatalf("kept %q, want %q (pass's recording deleted)\n%s", kept, want, out)
	}

	w := whyOf(t, filepath.Join(traces, "bump.test-1.rwd"))
	if w.Failure.Kind != "signal" || !strings.HasSuffix(w.Failure.Place.Function, "(*cache).bump") {
		t.Errorf("bump: failure %+v, want the fault in (*cache).bump", w.Failure)
	}
	r := run(t, runOpts{}, rewind(t), "why", filepath.Join(traces, "fails.test-1.rwd"))
	text := string(r.Stdout)
	at := "reported at testprogs/citest/fails.TestAverage at fails_test.go:" + strconv.Itoa(lineOf(t, "go/citest/fails/fails_test.go", "t.Errorf"))
	if r.Code != 0 || !strings.Contains(text, "average = 3, want 4") || !strings.Contains(text, at) {
		t.Errorf("why fails: exit %d, want the failed check reported at its line:\n%s", r.Code, text)
	}
}
