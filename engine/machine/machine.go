// Package machine describes the CPU a recording is made or replayed on, and
// says when a replay runs on one that can make it diverge: without CPUID
// faulting, programs see the replaying CPU's cpuid answers (its model, its
// features, the APIC id of the CPU they run on), not the recorded ones.
package machine

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// CPUInfo returns this machine's CPU model name and feature flags, as
// /proc/cpuinfo gives them for its first CPU.
func CPUInfo() (model string, flags []string) {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "", nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() && (model == "" || flags == nil) {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch k, v = strings.TrimSpace(k), strings.TrimSpace(v); k {
		case "model name":
			if model == "" {
				model = v
			}
		case "flags":
			if flags == nil {
				flags = strings.Fields(v)
			}
		}
	}
	return model, flags
}

// Warnings says, one line each, how this machine differs from the one h was
// recorded on in ways that can make the replay diverge. Nothing when they
// agree, or when the trace is too old to say.
func Warnings(h *trace.Header) []string {
	var out []string
	if h.CPU != nil {
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(0, &set); err == nil && !set.IsSet(*h.CPU) {
			out = append(out, fmt.Sprintf("recorded on CPU %d, which this replay may not use: "+
				"cpuid names the CPU it runs on (its APIC id), and a program that keeps it can diverge", *h.CPU))
		}
	}
	model, flags := CPUInfo()
	if !h.CPUIDFaulting && !h.CpuidPatched && h.CPUModel != "" && model != "" && h.CPUModel != model {
		out = append(out, fmt.Sprintf("recorded on %q, replayed on %q: without CPUID faulting the program "+
			"sees this CPU's cpuid answers and can take other paths (memcpy variants, feature checks)", h.CPUModel, model))
	}
	if len(h.CPUFlags) > 0 && len(flags) > 0 {
		var missing []string
		for _, f := range h.CPUFlags {
			if !slices.Contains(flags, f) && f != "cpuid_fault" {
				missing = append(missing, f)
			}
		}
		if len(missing) > 0 {
			if len(missing) > 8 {
				missing = append(missing[:8], "…")
			}
			out = append(out, "this CPU lacks features of the recording's ("+strings.Join(missing, " ")+
				"): code that used them can fault or diverge")
		}
	}
	if w := vdsoWarning(h); w != "" {
		out = append(out, w)
	}
	return out
}

// MissingFeatures lists the instruction set extensions of the CPU h was
// recorded on that this one lacks: a replay here can fault where the
// recording ran on. Nothing when they agree or the trace does not say.
func MissingFeatures(h *trace.Header) []string {
	_, flags := CPUInfo()
	if len(h.CPUFlags) == 0 || len(flags) == 0 {
		return nil
	}
	var missing []string
	for _, f := range features {
		if slices.Contains(h.CPUFlags, f.Name) && !slices.Contains(flags, f.Name) {
			missing = append(missing, f.Name)
		}
	}
	return missing
}
