package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestHunt: rewind record --until-fail records testdata/flaky.c (which
// fails on a run the test names) again and again, two at a time, until a
// run fails or all pass; it keeps the first failing recording and the last
// passing one, which replay, and nothing else; --fail-on makes a run whose
// output matches fail; --keep-on-failure keeps a single run's recording
// only when it fails.
func TestHunt(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "flaky.c")
	for _, tc := range []struct {
		name     string
		flags    []string
		failAt   string // the run that fails
		extra    []string
		code     int
		summary  string // a regexp of the summary line
		fail     bool   // a failing recording is kept
		failText string // what its replay prints
	}{
		{"fails", []string{"--until-fail=10", "-j", "2"}, "3", nil, 3, `[3-5] runs, 1 failed`, true, "flaky: failed on run 3"},
		{"passes", []string{"--until-fail=3", "-j", "2"}, "100", nil, 0, `3 runs, 0 failed`, false, ""},
		{"fail-on", []string{"--until-fail", "-j", "1", "--fail-on", "^oops$"}, "2", []string{"oops"}, 1, `2 runs, 1 failed`, true, "oops"},
		{"chaos", []string{"--until-fail=5", "--chaos", "-j", "2"}, "2", nil, 3, `[2-4] runs, 1 failed.*chaos seed \d+`, true, "flaky: failed on run 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			args := append([]string{"record"}, tc.flags...)
			args = append(append(args, "-o", filepath.Join(dir, "hunt.rwd"), "--", prog, filepath.Join(dir, "count"), tc.failAt), tc.extra...)
			r := run(t, runOpts{Dir: dir}, rewind(t), args...)
			if r.Code != tc.code || !regexp.MustCompile(tc.summary).Match(r.Stderr) {
				t.Fatalf("exit %d, want %d; stderr lacks %q:\n%s", r.Code, tc.code, tc.summary, r.Stderr)
			}
			entries, _ := os.ReadDir(dir)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			want := []string{"count", "hunt-pass.rwd"}
			if tc.fail {
				want = []string{"count", "hunt-pass.rwd", "hunt.rwd"}
			}
			if strings.Join(names, " ") != strings.Join(want, " ") {
				t.Fatalf("left %v, want %v (the failing recording, the last passing one, nothing else)", names, want)
			}
			for _, n := range names[1:] {
				out, stderr, code := replayCheck(t, filepath.Join(dir, n))
				if code != 0 {
					t.Errorf("replay --check %s exited %d:\n%s", n, code, stderr)
				}
				if n == "hunt.rwd" && !strings.Contains(string(out)+string(stderr), tc.failText) {
					t.Errorf("the failing recording's replay does not show %q:\n%s%s", tc.failText, out, stderr)
				}
			}
		})
	}
}

// TestKeepOnFailure: one run's recording is deleted when the program
// succeeds, kept when it fails.
func TestKeepOnFailure(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "flaky.c")
	dir := t.TempDir()
	trace := filepath.Join(dir, "k.rwd")
	count := filepath.Join(dir, "count")
	for _, tc := range []struct {
		failAt string
		code   int
		kept   bool
	}{
		{"5", 0, false}, // run 1: passes
		{"2", 3, true},  // run 2: fails
	} {
		r := run(t, runOpts{}, rewind(t), "record", "--keep-on-failure", "-o", trace, "--", prog, count, tc.failAt)
		_, err := os.Stat(trace)
		if r.Code != tc.code || (err == nil) != tc.kept {
			t.Fatalf("exit %d (want %d), recording there: %v (want %v)\nstderr:\n%s", r.Code, tc.code, err == nil, tc.kept, r.Stderr)
		}
	}
}

// TestHuntBadFlags: one line and a non-zero exit for flags that do not go
// together.
func TestHuntBadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--until-fail=0", "--", "true"},
		{"--until-fail", "--fail-on", "(", "--", "true"},
		{"-j", "2", "--", "true"},
		{"--fail-on", "x", "--", "true"},
		{"--until-fail", "--keep-on-failure", "--", "true"},
		{"--until-fail", "--bind-to-cpu", "0", "--", "true"},
		{"--until-fail", "-j", "-1", "--", "true"},
	} {
		r := run(t, runOpts{Dir: t.TempDir()}, rewind(t), append([]string{"record"}, args...)...)
		if r.Code == 0 || len(strings.Split(strings.TrimSpace(string(r.Stderr)), "\n")) != 1 {
			t.Errorf("record %v: exit %d, stderr %q; want one line and a failure", args, r.Code, r.Stderr)
		}
		checkNoPanic(t, "record", r.Stderr)
	}
}

// TestHuntChaosRace: --until-fail --chaos finds the lost update of
// testdata/race.c with 1M increments a thread (each thread's loop fits in
// one of the default slices), issue 25's measure, and the failing
// recording replays with the same loss. The hunt may take 150 runs: 2 to
// 13 on the Intel VM of session 27 (~4 ms a loop), 2 to 80 (median ~25)
// on the AMD EPYC of session 28 (~1.2 ms a loop, shorter than most chaos
// slices).
func TestHuntChaosRace(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "race.c")
	dir := t.TempDir()
	trace := filepath.Join(dir, "race.rwd")
	r := run(t, runOpts{Dir: dir}, rewind(t), "record", "--until-fail=150", "--chaos", "-j", "2",
		"--fail-on", `lost [1-9]`, "-o", trace, "--", prog, "1000000")
	m := regexp.MustCompile(`total \d+ lost [1-9]\d*`).Find(r.Stderr)
	if r.Code != 1 || m == nil {
		t.Fatalf("exit %d, want 1 with a lost update shown:\n%s", r.Code, tail(r.Stderr))
	}
	out, stderr, code := replayCheck(t, trace)
	if code != 0 || !strings.Contains(string(out), string(m)) {
		t.Errorf("replay --check exited %d, printed %q, want %q\n%s", code, out, m, stderr)
	}
}
