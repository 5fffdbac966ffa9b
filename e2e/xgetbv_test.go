package e2e

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestPatchedXgetbv: an xgetbv where the code zeroes ecx just before it
// (the loader's, once in every process; testdata/xgetbv.c's xcr0) traps
// once and is then answered by the hook with no stop, in that process and,
// through the known sites, in the next recording from its start; one whose
// ecx comes from a variable stays trapped at each call. Replay gives the
// same answers; the debugger steps over the patched xgetbv and reads the
// program's own bytes there; with --cpu-features the hook's answer hides
// the states of the features hidden, as the trapped one's does.
func TestPatchedXgetbv(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "xgetbv.c", "-O2")
	native := run(t, runOpts{}, prog, "100")
	if native.Code != 0 {
		t.Fatalf("%s: exit %d", prog, native.Code)
	}
	env := []string{"REWIND_CACHE=" + t.TempDir()}
	xgetbvs := func(trace string) int {
		t.Helper()
		r := run(t, runOpts{}, rewind(t), "events", "--json", "--type", "cpuid", trace)
		n := 0
		for _, e := range ndjson[map[string]any](t, r) {
			if strings.HasPrefix(fmt.Sprint(e["text"]), "xgetbv(") {
				n++
			}
		}
		return n
	}
	var warm string
	for _, tt := range []struct {
		name     string
		min, max int
	}{
		// The loader's and xcr0's trap once each, then xcr's 3 calls.
		{"cold", 3, 5},
		// Both patched from the start: xcr's 3 calls alone.
		{"warm", 3, 3},
	} {
		trace := filepath.Join(t.TempDir(), tt.name+".rwd")
		r := recordOpts(t, runOpts{Env: env}, trace, prog, "100")
		if r.Code != 0 || string(r.Stdout) != string(native.Stdout) {
			t.Fatalf("record %s: exit %d, printed %q; natively %q\n%s", tt.name, r.Code, r.Stdout, native.Stdout, tail(r.Stderr))
		}
		if n := xgetbvs(trace); n < tt.min || n > tt.max {
			t.Errorf("%s: %d xgetbv events for 102 questions at a patchable site and 3 at one that is not; want %d to %d", tt.name, n, tt.min, tt.max)
		}
		wantReplayed(t, trace, string(native.Stdout))
		warm = trace
	}

	// The debugger, in the warm recording (xcr0's site patched at the
	// exec), steps over the xgetbv and reads the program's bytes there.
	cmds := []string{"break xcr0", "continue", "x/4i $pc"}
	rs := batch(t, warm, cmds...)
	listing := fmt.Sprint(rs[2]["text"])
	m := regexp.MustCompile(`(?m)^\s*=?>?\s*(0x[0-9a-f]+)\s+<[^>]*>:\s*xgetbv`).FindStringSubmatch(listing)
	if m == nil {
		t.Fatalf("no xgetbv in the listing of xcr0 (the patched code must read as the program's):\n%s", listing)
	}
	site, _ := strconv.ParseUint(m[1], 0, 64)
	start, _ := strconv.ParseUint(fmt.Sprint(stopOf(t, rs[1])["pc"]), 0, 64)
	for range 4 {
		cmds = append(cmds, "stepi")
	}
	rs = batch(t, warm, cmds...)
	crossed := false
	for i, r := range rs[3:] {
		pc, _ := strconv.ParseUint(fmt.Sprint(stopOf(t, r)["pc"]), 0, 64)
		if pc < start || pc > site+32 {
			t.Fatalf("stepi %d stopped at %#x, outside xcr0 (from %#x, xgetbv at %#x): in the stub?", i+1, pc, start, site)
		}
		crossed = crossed || pc > site
	}
	if !crossed {
		t.Errorf("4 stepi from %#x never passed the xgetbv at %#x", start, site)
	}
	rs = batch(t, warm, fmt.Sprintf("x/3xb %#x", site))
	if b := fmt.Sprint(rs[0]["value"]); !strings.Contains(b, "0x0f 0x01 0xd0") {
		t.Errorf("x/3xb at the xgetbv shows %s, not the program's xgetbv", b)
	}

	// Hidden features: the patched site's answer and the trapped one's
	// agree, without AVX-512's states.
	if !strings.Contains(string(native.Stdout), "zmm-state=1") {
		t.Skipf("the kernel enabled no AVX-512 state here: %q", native.Stdout)
	}
	v3 := filepath.Join(t.TempDir(), "v3.rwd")
	r := recordOpts(t, runOpts{Env: env, RecordFlags: []string{"--cpu-features", "x86-64-v3"}}, v3, prog, "100")
	want := "ymm-state=1 zmm-state=0 same=100 of 100, other agrees\n"
	if r.Code != 0 || string(r.Stdout) != want {
		t.Fatalf("record --cpu-features x86-64-v3: exit %d, printed %q; want %q\n%s", r.Code, r.Stdout, want, tail(r.Stderr))
	}
	wantReplayed(t, v3, want)
}
