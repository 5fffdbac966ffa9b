package machine

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// TestWarnings: a header of this very machine gets no warning; each way a
// recording's machine can differ gets the line that names it. What this
// machine has (CPUID faulting or not) is read here, not assumed.
func TestWarnings(t *testing.T) {
	model, flags := CPUInfo()
	if model == "" || len(flags) == 0 {
		t.Skip("no /proc/cpuinfo model and flags here")
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	allowed := -1
	for c := 0; c < 1024 && allowed < 0; c++ {
		if set.IsSet(c) {
			allowed = c
		}
	}
	faulting := slices.Contains(flags, "cpuid_fault")
	notAllowed := 100000 // beyond any CPU set
	for _, c := range []struct {
		name string
		h    trace.Header
		want []string // substrings of the warnings, in order; nil: none
	}{
		{"this machine", trace.Header{CPU: &allowed, CPUModel: model, CPUFlags: flags, CPUIDFaulting: faulting}, nil},
		{"an old trace", trace.Header{}, nil},
		{"a CPU this replay may not use", trace.Header{CPU: &notAllowed, CPUModel: model, CPUFlags: flags, CPUIDFaulting: faulting},
			[]string{"recorded on CPU 100000"}},
		{"another model without faulting", trace.Header{CPUModel: "Imaginary CPU 9000", CPUFlags: flags},
			[]string{`recorded on "Imaginary CPU 9000"`}},
		{"a feature this CPU lacks", trace.Header{CPUModel: model, CPUFlags: append(slices.Clone(flags), "imaginary_ext"), CPUIDFaulting: faulting},
			[]string{"lacks features of the recording's (imaginary_ext)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Warnings(&c.h)
			if len(got) != len(c.want) {
				t.Fatalf("warnings %q, want %d matching %q", got, len(c.want), c.want)
			}
			for i, w := range c.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("warning %q lacks %q", got[i], w)
				}
			}
		})
	}
	// A recording that trapped cpuid warns exactly where this CPU cannot.
	got := Warnings(&trace.Header{CPUModel: model, CPUFlags: flags, CPUIDFaulting: true})
	if warned := len(got) == 1 && strings.Contains(got[0], "CPUID faulting"); warned == faulting {
		t.Errorf("cpuid faulting recorded, this CPU has it: %v; warnings %q", faulting, got)
	}
}
