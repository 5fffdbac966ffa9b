package e2e

import (
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestPatchPlans: the children of a shell map the same loader and libc at
// the same places, and the recorder patches their known sites from what
// it did in the first (a plan: engine/record/patchplan.go) instead of
// working it out again at each exec; the recording replays, replay
// patching them from plans of its own (engine/replay/patchplan.go).
// --no-buffer patches nothing, from a plan or not.
func TestPatchPlans(t *testing.T) {
	t.Parallel()
	cache := t.TempDir()
	env := []string{"REWIND_CACHE=" + cache, "REWIND_DEBUG=1"}
	script := "/bin/true; /bin/true; /bin/true; /bin/true; /bin/true"
	used := regexp.MustCompile(`rec: patch plans: (\d+) made, (\d+) used`)
	replayed := regexp.MustCompile(`replay: patch plans: (\d+) made, (\d+) used`)
	for _, name := range []string{"cold.rwd", "warm.rwd"} {
		trace := filepath.Join(t.TempDir(), name)
		r := recordOpts(t, runOpts{Env: env}, trace, "/bin/sh", "-c", script)
		if r.Code != 0 {
			t.Fatalf("record %s: exit %d\n%s", name, r.Code, tail(r.Stderr))
		}
		m := used.FindSubmatch(r.Stderr)
		if m == nil {
			t.Fatalf("record %s: no report of the patch plans in the debug output\n%s", name, tail(r.Stderr))
		}
		n, _ := strconv.Atoi(string(m[2]))
		// Warm, the sites of the first recording are known at each exec:
		// each /bin/true after the first patches from the plans made at
		// the first (its exec, its libc).
		if name == "warm.rwd" && n < 4 {
			t.Errorf("%s: %s; want at least 4 used (5 execs of /bin/true)", name, m[0])
		}
		// Replay patches the same lists of sites from its own plans.
		rep := run(t, runOpts{Env: env}, rewind(t), "replay", "--check", trace)
		if rep.Code != 0 {
			t.Fatalf("replay --check %s: exit %d\n%s", name, rep.Code, tail(rep.Stderr))
		}
		m = replayed.FindSubmatch(rep.Stderr)
		if m == nil {
			t.Fatalf("replay %s: no report of the patch plans in the debug output\n%s", name, tail(rep.Stderr))
		}
		if n, _ := strconv.Atoi(string(m[2])); name == "warm.rwd" && n < 4 {
			t.Errorf("replay of %s: %s; want at least 4 used", name, m[0])
		}
	}
	plain := filepath.Join(t.TempDir(), "plain.rwd")
	r := recordOpts(t, runOpts{Env: env, RecordFlags: []string{"--no-buffer"}}, plain, "/bin/sh", "-c", script)
	if r.Code != 0 {
		t.Fatalf("record --no-buffer: exit %d\n%s", r.Code, tail(r.Stderr))
	}
	if m := used.FindSubmatch(r.Stderr); m == nil || string(m[1]) != "0" || string(m[2]) != "0" {
		t.Errorf("--no-buffer: %q; want no plan made or used", m)
	}
	if _, errOut, code := replayCheck(t, plain); code != 0 {
		t.Fatalf("replay --check of the --no-buffer recording: exit %d\n%s", code, tail(errOut))
	}
}
