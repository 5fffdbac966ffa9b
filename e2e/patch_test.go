package e2e

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPatchedSitesInTheDebugger: an rdrand the recorder replaced by a trap
// reads as rdrand in the debugger (x/b, x/i), stepi over it gives the
// destination the recorded value, and reverse-stepi comes back onto it.
func TestPatchedSitesInTheDebugger(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "conformance/rdrand.c", "-O2", "-mrdrnd", "-mrdseed")
	trace := filepath.Join(t.TempDir(), "rdrand.rwd")
	stdout := mustRecord(t, trace, prog).Stdout
	r := run(t, runOpts{}, rewind(t), "events", "--json", trace)
	var pc, value string
	valueRE := regexp.MustCompile(`^rdrand at rip 0x[0-9a-f]+ = (0x[0-9a-f]+)$`)
	for _, e := range ndjson[map[string]any](t, r) {
		if m := valueRE.FindStringSubmatch(fmt.Sprint(e["text"])); e["type"] == "rdrand" && m != nil {
			pc, value = e["pc"].(string), m[1]
			break
		}
	}
	if pc == "" {
		if strings.Contains(string(stdout), "this CPU has no rdrand") {
			t.Skip("this CPU has no rdrand")
		}
		t.Fatalf("no rdrand event in the recording:\n%s", tail(r.Stdout))
	}
	rs := batch(t, trace, "break *"+pc, "continue", "x/4xb $pc", "x/1i $pc", "stepi", "info registers", "reverse-stepi", "x/1i $pc")
	if st := stopOf(t, rs[1]); st["pc"] != pc {
		t.Fatalf("stopped at %v, want the rdrand at %s", st["pc"], pc)
	}
	bytes := fmt.Sprint(rs[2]["value"])
	if !strings.Contains(bytes, "0x0f 0xc7") || strings.Contains(bytes, "0x0f 0x0b") {
		t.Errorf("x/4xb at the rdrand shows %s: the trap, not the program's instruction", bytes)
	}
	for _, i := range []int{3, 7} {
		if text := rs[i]["text"].(string); !strings.Contains(text, "rdrand") {
			t.Errorf("%v: %q, want rdrand", rs[i]["command"], text)
		}
	}
	st := stopOf(t, rs[4])
	regs := rs[5]["value"].(map[string]any)
	if st["pc"] == pc || regs["rip"] != st["pc"] {
		t.Errorf("stepi over the rdrand: stop at %v, rip %v", st["pc"], regs["rip"])
	}
	found := false
	for _, v := range regs {
		found = found || v == value
	}
	if !found {
		t.Errorf("no register holds the recorded value %s after stepi: %v", value, regs)
	}
	if st := stopOf(t, rs[6]); st["pc"] != pc {
		t.Errorf("reverse-stepi went to %v, want %s", st["pc"], pc)
	}
}

// TestWritableExecutableWarning: memory mapped writable and executable is
// scanned when it is made; code written into it later is not, and the
// recording says so once, on one line.
func TestWritableExecutableWarning(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "jitwx.c")
	trace := filepath.Join(t.TempDir(), "jitwx.rwd")
	stdout, stderr, code := record(t, trace, prog)
	if code != 0 || !strings.Contains(string(stdout), "jit returned 0") {
		t.Fatalf("record: exit %d: %s%s", code, stdout, stderr)
	}
	var warnings []string
	for _, l := range lines(stderr) {
		if strings.HasPrefix(l, "rewind: warning:") {
			warnings = append(warnings, l)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "writable and executable") {
		t.Errorf("warnings %q, want one about writable and executable memory", warnings)
	}
	if _, stderr, code := replayCheck(t, trace); code != 0 {
		t.Errorf("replay --check: exit %d: %s", code, stderr)
	}
}
