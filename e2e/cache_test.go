package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBlobCacheAcrossRecordings: the files a recording stores (the loader,
// libc) go compressed into the user's cache; the next recording copies
// them from there, and its trace replays; REWIND_CACHE=off keeps nothing.
func TestBlobCacheAcrossRecordings(t *testing.T) {
	t.Parallel()
	cache := t.TempDir()
	env := []string{"REWIND_CACHE=" + cache}
	first := filepath.Join(t.TempDir(), "first.rwd")
	if r := recordOpts(t, runOpts{Env: env}, first, "/bin/true"); r.Code != 0 {
		t.Fatalf("record /bin/true: exit %d\n%s", r.Code, tail(r.Stderr))
	}
	ents, err := os.ReadDir(filepath.Join(cache, "blobs"))
	if err != nil || len(ents) == 0 {
		t.Fatalf("the cache holds nothing after a recording (%v)", err)
	}
	second := filepath.Join(t.TempDir(), "second.rwd")
	r := recordOpts(t, runOpts{Env: env}, second, "/bin/echo", "from the cache")
	if r.Code != 0 || string(r.Stdout) != "from the cache\n" {
		t.Fatalf("record echo: exit %d, stdout %q\n%s", r.Code, r.Stdout, tail(r.Stderr))
	}
	wantReplayed(t, second, "from the cache\n")

	xdg := t.TempDir()
	off := filepath.Join(t.TempDir(), "off.rwd")
	if r := recordOpts(t, runOpts{Env: []string{"REWIND_CACHE=off", "XDG_CACHE_HOME=" + xdg}}, off, "/bin/true"); r.Code != 0 {
		t.Fatalf("record with REWIND_CACHE=off: exit %d\n%s", r.Code, tail(r.Stderr))
	}
	if ents, _ := os.ReadDir(xdg); len(ents) != 0 {
		t.Errorf("REWIND_CACHE=off wrote %d entries into the cache home", len(ents))
	}
}

// TestKnownSitesAcrossRecordings: the system call and cpuid sites the hook
// served in one recording are kept in the cache and patched at once in
// the next recording of the same program: its loader's first calls no
// longer stop. So is the analysis of their files (patch.Analysis), which
// the next recording uses instead of reading the files' layouts: the
// trace made with both replays (replay analyzes the files itself, and
// diverges where a kept window differs from its own). A damaged analysis
// is ignored. --no-buffer patches none of them.
func TestKnownSitesAcrossRecordings(t *testing.T) {
	t.Parallel()
	cache := t.TempDir()
	env := []string{"REWIND_CACHE=" + cache}
	var stops []int
	var traces []string
	for _, name := range []string{"cold.rwd", "warm.rwd"} {
		trace := filepath.Join(t.TempDir(), name)
		if r := recordOpts(t, runOpts{Env: env}, trace, "/bin/true"); r.Code != 0 {
			t.Fatalf("record /bin/true: exit %d\n%s", r.Code, tail(r.Stderr))
		}
		ev := run(t, runOpts{}, rewind(t), "events", "--json", trace)
		n, buffered := 0, 0
		for _, line := range lines(ev.Stdout) {
			var e struct {
				Type     string `json:"type"`
				Buffered bool   `json:"buffered"`
			}
			if json.Unmarshal([]byte(line), &e) != nil {
				t.Fatalf("bad NDJSON line %q", line)
			}
			switch {
			case e.Buffered:
				buffered++
			case e.Type == "syscall" || e.Type == "cpuid":
				n++
			}
		}
		if buffered == 0 {
			t.Skip("no system call buffering here")
		}
		stops = append(stops, n)
		traces = append(traces, trace)
		if name == "cold.rwd" {
			kept, _ := filepath.Glob(filepath.Join(cache, "analyses", "*.json"))
			if len(kept) == 0 {
				t.Fatal("no analysis kept after the first recording")
			}
		}
	}
	if stops[1] > stops[0]-3 {
		t.Errorf("the second recording has %d calls and cpuids that stopped, the first %d: the sites kept were not patched", stops[1], stops[0])
	}
	if _, errOut, code := replayCheck(t, traces[1]); code != 0 {
		t.Fatalf("replay --check of the recording made with the kept sites: exit %d\n%s", code, tail(errOut))
	}
	// --no-buffer maps no hook page: the sites kept stay unpatched (the
	// mmap of libc once jumped to stubs of a hook that was not there).
	plain := filepath.Join(t.TempDir(), "plain.rwd")
	if r := recordOpts(t, runOpts{Env: env, RecordFlags: []string{"--no-buffer"}}, plain, "/bin/true"); r.Code != 0 {
		t.Fatalf("record --no-buffer /bin/true with sites kept: exit %d\n%s", r.Code, tail(r.Stderr))
	}
	if _, errOut, code := replayCheck(t, plain); code != 0 {
		t.Fatalf("replay --check of the --no-buffer recording: exit %d\n%s", code, tail(errOut))
	}
	// Replays use the analyses kept (the recorder's, of the libraries
	// unchanged since; engine/replay's TestLibraryAnalyses: those of the
	// trace's copies otherwise).
	for i := range 2 {
		if r := run(t, runOpts{Env: env}, rewind(t), "replay", "--check", traces[1]); r.Code != 0 {
			t.Fatalf("replay --check %d with the cache: exit %d\n%s", i+1, r.Code, tail(r.Stderr))
		}
	}
	kept, _ := filepath.Glob(filepath.Join(cache, "analyses", "*.json"))
	for _, f := range kept {
		if err := os.WriteFile(f, []byte(`{"Version":1,"Patch":1,"Scans":[{"Offset":`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	damaged := filepath.Join(t.TempDir(), "damaged.rwd")
	if r := recordOpts(t, runOpts{Env: env}, damaged, "/bin/true"); r.Code != 0 || len(r.Stderr) > 0 && !strings.HasPrefix(string(r.Stderr), "rewind: recorded") {
		t.Fatalf("record /bin/true with damaged analyses kept: exit %d\n%s", r.Code, tail(r.Stderr))
	}
	if _, errOut, code := replayCheck(t, damaged); code != 0 {
		t.Fatalf("replay --check of the recording made with damaged analyses kept: exit %d\n%s", code, tail(errOut))
	}
}

// TestConformanceAfterKnownSites: conformance programs recorded twice
// with one cache, the second time with the sites the first one's hook
// served patched at exec, so that more of their calls go through the hook:
// failed.c reaches its uretprobe (which the recorder's filter does not see)
// right after calls the hook made, which replay hands back to the hook in
// a run (it diverged with a SIGILL where the run went on through the
// call); seccomp_kill.c installs a filter of its own, which would judge
// the calls its hook makes from then on (a KILL verdict there left no
// record, and replay waited, at times, for a death nothing caused): the
// hook makes them traced. Both replay.
func TestConformanceAfterKnownSites(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		src  string
		code int
	}{{"conformance/failed.c", 0}, {"conformance/seccomp_kill.c", 128 + 31}} {
		t.Run(filepath.Base(tc.src), func(t *testing.T) {
			t.Parallel()
			prog := buildC(t, tc.src)
			env := []string{"REWIND_CACHE=" + t.TempDir()}
			// libc's getppid and the calls around it, served by the hook
			// (and so known to the cache) in another program first.
			calls := buildC(t, "buffered_flushes.c")
			if r := recordOpts(t, runOpts{Env: env}, filepath.Join(t.TempDir(), "calls.rwd"), calls, "2", "10"); r.Code != 0 {
				t.Fatalf("record buffered_flushes: exit %d\n%s", r.Code, tail(r.Stderr))
			}
			for _, name := range []string{"cold.rwd", "warm.rwd"} {
				trace := filepath.Join(t.TempDir(), name)
				r := recordOpts(t, runOpts{Env: env}, trace, prog)
				if r.Code != tc.code {
					t.Fatalf("record %s: exit %d, want %d\n%s", name, r.Code, tc.code, tail(r.Stderr))
				}
				wantReplayed(t, trace, string(r.Stdout))
			}
		})
	}
}
