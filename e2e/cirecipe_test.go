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
	goTool := need(t, "go")
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

// TestCIRecipeCTest runs docs/ci.md's recipe for CTest: the test launcher
// (CMake 3.29 and later) or the emulator (before) runs each test under
// rewind record --keep-on-failure; the crashing test's recording stays and
// rewind why finds its overflow.
func TestCIRecipeCTest(t *testing.T) {
	cmake := need(t, "cmake")
	ctest := need(t, "ctest")
	build, traces := t.TempDir(), t.TempDir()
	launcher := rewind(t) + ";record;--keep-on-failure;--"
	steps := [][]string{
		{cmake, "-S", filepath.Join(testdataDir, "cmake"), "-B", build, "-DCMAKE_BUILD_TYPE=Debug",
			"-DCMAKE_TEST_LAUNCHER=" + launcher, "-DCMAKE_CROSSCOMPILING_EMULATOR=" + launcher},
		{cmake, "--build", build},
	}
	for _, s := range steps {
		if out, err := exec.Command(s[0], s[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(s, " "), err, out)
		}
	}
	cmd := exec.Command(ctest, "--test-dir", build, "--output-on-failure")
	cmd.Env = append(os.Environ(), "REWIND_TRACE_DIR="+traces)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("ctest passed, want list's crash:\n%s", out)
	}
	entries, _ := os.ReadDir(traces)
	if len(entries) != 1 || entries[0].Name() != "list_test-1.rwd" {
		t.Fatalf("kept %v, want list_test-1.rwd only\n%s", entries, out)
	}
	w := whyOf(t, filepath.Join(traces, entries[0].Name()))
	if w.Suspect < 0 || !strings.Contains(w.Chain[w.Suspect].Suspicion, "out of bounds") || w.Chain[w.Suspect].Function != "set_name" {
		t.Errorf("why: %+v\n%s", w.Chain, w.Verdict)
	}
}

// TestCIRecipePytest runs docs/ci.md's recipe for pytest: the interpreter
// recorded whole, kept because a test failed; rewind why names the failed
// test and the line its message points at.
func TestCIRecipePytest(t *testing.T) {
	python := need(t, "python3")
	if exec.Command(python, "-c", "import pytest").Run() != nil {
		t.Skip("pytest not installed")
	}
	traces := t.TempDir()
	r := run(t, runOpts{Env: []string{"REWIND_TRACE_DIR=" + traces}}, rewind(t), "record", "--keep-on-failure", "--",
		python, "-m", "pytest", "-q", "-p", "no:cacheprovider", filepath.Join(testdataDir, "pytest"))
	if r.Code != 1 {
		t.Fatalf("record pytest: exit %d, want 1\n%s\n%s", r.Code, tail(r.Stdout), tail(r.Stderr))
	}
	entries, _ := os.ReadDir(traces)
	if len(entries) != 1 {
		t.Fatalf("kept %v, want one recording", entries)
	}
	why := run(t, runOpts{}, rewind(t), "why", filepath.Join(traces, entries[0].Name()))
	line := strconv.Itoa(lineOf(t, "pytest/test_calc.py", "assert average"))
	for _, want := range []string{"test_average - assert 3 == 4", "reported at test_calc.py:" + line, "assert average([2, 4, 6]) == 4"} {
		if !strings.Contains(string(why.Stdout), want) {
			t.Errorf("why lacks %q:\n%s", want, why.Stdout)
		}
	}
}
