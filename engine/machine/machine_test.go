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
	// A recording that trapped cpuid replays on any CPU, one that cannot
	// fault on cpuid too (replay answers each recorded cpuid: cpuid.go in
	// engine/replay): no warning either way.
	got := Warnings(&trace.Header{CPUModel: model, CPUFlags: flags, CPUIDFaulting: true})
	if len(got) != 0 {
		t.Errorf("cpuid faulting recorded, this CPU has it: %v; warnings %q, want none", faulting, got)
	}
}

// TestVDSOWarning: a recording of this kernel's vDSO gets no warning; one
// whose functions sit elsewhere is told that calls diverge; one with other
// bytes but the same layout that only reading them can; a trace from before
// the vDSO was patched gets nothing.
func TestVDSOWarning(t *testing.T) {
	cur := VDSO()
	if cur == nil {
		t.Skip("this kernel has no vDSO")
	}
	moved := &trace.VDSO{SHA256: "other", Size: cur.Size, Funcs: map[string]uint64{}}
	rebuilt := &trace.VDSO{SHA256: "other", Size: cur.Size, Funcs: cur.Funcs}
	for name, off := range cur.Funcs {
		moved.Funcs[name] = off + 16
	}
	for _, c := range []struct {
		name string
		h    trace.Header
		want string // "": no warning
	}{
		{"this kernel", trace.Header{Patch: 1, VDSO: cur}, ""},
		{"functions moved", trace.Header{Patch: 1, VDSO: moved, Kernel: "0.1-imaginary"}, "lays out its functions differently"},
		{"same layout, other bytes", trace.Header{Patch: 1, VDSO: rebuilt}, "with its functions at the same places"},
		{"from before patching", trace.Header{VDSO: moved}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := vdsoWarning(&c.h)
			if c.want == "" && got != "" || !strings.Contains(got, c.want) {
				t.Errorf("warning %q, want one with %q", got, c.want)
			}
		})
	}
	if w := vdsoWarning(&trace.Header{Patch: 1, VDSO: moved, Kernel: "0.1-imaginary"}); !strings.Contains(w, "0.1-imaginary") {
		t.Errorf("the warning does not name the recording's kernel: %q", w)
	}
}
