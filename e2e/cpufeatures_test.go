package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCPUFeaturesHidden records with record --cpu-features, which hides
// CPU features from the program so that the recording replays on a CPU
// without them (issue 24): the program is told the level's features and
// not the ones beyond, in cpuid and in xgetbv's register states, with
// buffering and without (cpuid patched or trapped, or faulting, whichever
// this machine does); the recording replays, says what it hid, and bad
// specs are one-line refusals.
func TestCPUFeaturesHidden(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "cpufeatures.c", "-O1")
	native := run(t, runOpts{}, prog)
	first, _, _ := strings.Cut(string(native.Stdout), "\n")
	shown := regexp.MustCompile(`(\S+)=1\b`).FindAllStringSubmatch(first, -1)
	if native.Code != 0 || len(shown) == 0 {
		t.Skipf("this CPU has none of the features cpufeatures.c asks of (exit %d): %q", native.Code, native.Stdout)
	}
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"buffered", nil},
		{"no-buffer", []string{"--no-buffer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			trace := filepath.Join(t.TempDir(), "cf.rwd")
			// The first level: SSE2 and no more, so every feature the
			// program asks of is hidden.
			rec := recordOpts(t, runOpts{RecordFlags: append([]string{"--cpu-features", "x86-64"}, tc.flags...)}, trace, prog)
			if rec.Code != 0 {
				t.Fatalf("record exited %d\nstderr:\n%s", rec.Code, tail(rec.Stderr))
			}
			want := "sse4.2=0 popcnt=0 avx=0 avx2=0 avx512f=0\nymm-state=0 zmm-state=0\nlen=1048575\n"
			if string(rec.Stdout) != want {
				t.Fatalf("recorded program printed %q, want %q (natively %q)", rec.Stdout, want, native.Stdout)
			}
			events, progStderr := checkRecorded(t, rec.Stderr, trace, "")
			stdout, stderr, code := replayCheck(t, trace)
			checkReplayed(t, events, rec.Stdout, progStderr, stdout, stderr, code)
			info := string(run(t, runOpts{}, rewind(t), "info", trace).Stdout)
			hidden := regexp.MustCompile(`(?m)^hidden: +CPU features the program was not shown \(--cpu-features x86-64\): (.*)$`).FindStringSubmatch(info)
			if hidden == nil {
				t.Fatalf("rewind info says nothing of the hidden features:\n%s", info)
			}
			// /proc/cpuinfo names what __builtin_cpu_supports calls sse4.2.
			names := map[string]string{"sse4.2": "sse4_2"}
			for _, m := range shown {
				name := m[1]
				if n, ok := names[name]; ok {
					name = n
				}
				if !strings.Contains(" "+hidden[1]+" ", " "+name+" ") {
					t.Errorf("rewind info's hidden features %q lack %s, which this CPU has", hidden[1], name)
				}
			}
		})
	}
	// x86-64-v3 keeps AVX and hides AVX-512, in cpuid and in the register
	// states xgetbv says are enabled, which the recording logs and replay
	// answers (libgcc asks cpuid other questions without them).
	t.Run("xgetbv", func(t *testing.T) {
		t.Parallel()
		if !strings.Contains(string(native.Stdout), "ymm-state=1") {
			t.Skipf("the kernel enabled no AVX state here: %q", native.Stdout)
		}
		trace := filepath.Join(t.TempDir(), "v3.rwd")
		rec := recordOpts(t, runOpts{RecordFlags: []string{"--cpu-features", "x86-64-v3"}}, trace, prog)
		if rec.Code != 0 || !strings.Contains(string(rec.Stdout), "avx512f=0\nymm-state=1 zmm-state=0\n") {
			t.Fatalf("record exited %d, printed %q; want AVX's state and not AVX-512's\nstderr:\n%s", rec.Code, rec.Stdout, tail(rec.Stderr))
		}
		events, progStderr := checkRecorded(t, rec.Stderr, trace, "")
		stdout, stderr, code := replayCheck(t, trace)
		checkReplayed(t, events, rec.Stdout, progStderr, stdout, stderr, code)
		listed := string(run(t, runOpts{}, rewind(t), "events", trace).Stdout)
		if !regexp.MustCompile(`xgetbv\(0x0\) at rip 0x[0-9a-f]+ = 0x[0-9a-f]+`).MatchString(listed) {
			t.Errorf("rewind events lists no xgetbv:\n%s", listed)
		}
	})
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		trace := filepath.Join(dir, "bad.rwd")
		for _, c := range []struct{ spec, want string }{
			{"x86-64-v9", `"x86-64-v9" is not native or a level`},
			{"x86-64-v3,avx2", `after the level, each item is -FEATURE or +FEATURE`},
			{"native,-avx1024", `"avx1024" is not a feature rewind can hide`},
		} {
			res := run(t, runOpts{}, rewind(t), "record", "--cpu-features", c.spec, "-o", trace, "--", prog)
			msg := strings.TrimSpace(string(res.Stderr))
			if res.Code == 0 || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
				t.Errorf("--cpu-features %s: exit %d, stderr %q; want a failure, one line with %q", c.spec, res.Code, msg, c.want)
			}
			if _, err := os.Stat(trace); err == nil {
				t.Errorf("--cpu-features %s: a trace was written", c.spec)
			}
		}
	})
}
