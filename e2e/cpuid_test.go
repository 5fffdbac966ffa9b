package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// cpuidFaulting says whether this machine's CPU traps cpuid for the
// recorder (the cpuid_fault flag): only then are cpuid sites patched.
func cpuidFaulting(t *testing.T) bool {
	b, err := os.ReadFile("/proc/cpuinfo")
	return err == nil && regexp.MustCompile(`(?m)^flags\s*:.*\bcpuid_fault\b`).Match(b)
}

// TestPatchedCpuid: where cpuid traps, a site that asked once asks the
// hook's table from then on, in the process and in a later one that maps
// the same program (testdata/cpuid.c: 5 questions a round, 110 rounds in
// two processes, and the loader's own in each), and replay gives the same
// answers; the debugger steps over the patched code as over the cpuid and
// reads the program's own instructions there. Also for a program linked
// at 0x400000 (gcc's cc1 is), whose stubs cannot go below it.
func TestPatchedCpuid(t *testing.T) {
	t.Parallel()
	if !cpuidFaulting(t) {
		t.Skip("this CPU does not trap cpuid (no cpuid_fault): cpuid is not patched")
	}
	for _, tt := range []struct {
		name  string
		flags []string
	}{
		{"pie", []string{"-O2"}},
		{"no-pie", []string{"-O2", "-no-pie"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			testPatchedCpuid(t, buildC(t, "cpuid.c", tt.flags...))
		})
	}
}

func testPatchedCpuid(t *testing.T, prog string) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "cpuid.rwd")
	stdout := mustRecord(t, trace, prog).Stdout
	for _, want := range []string{`(?m)^parent: \d+ cache levels, 100 rounds`, `(?m)^child: \d+ cache levels, 10 rounds`} {
		if !regexp.MustCompile(want).Match(stdout) {
			t.Fatalf("output %q, want %s", stdout, want)
		}
	}
	r := run(t, runOpts{}, rewind(t), "events", "--json", "--type", "cpuid", trace)
	leaf4 := 0
	for _, e := range ndjson[map[string]any](t, r) {
		if strings.HasPrefix(fmt.Sprint(e["text"]), "cpuid(0x4,") {
			leaf4++
		}
	}
	if leaf4 > 20 {
		t.Errorf("%d cpuid events of leaf 4 for the program's 550 questions and the loaders': its sites were not patched", leaf4)
	}
	rout, rerr, code := replayCheck(t, trace)
	if code != 0 {
		t.Fatalf("replay --check: exit %d: %s", code, rerr)
	}
	if !strings.Contains(string(rout), string(stdout)) {
		t.Errorf("replay printed %q, the recording %q", rout, stdout)
	}

	// One process: the debugger, in the second call (the site patched in
	// the first), steps over the cpuid and back.
	one := filepath.Join(dir, "one.rwd")
	mustRecord(t, one, prog, "3", "one")
	cmds := []string{"break cache_levels", "continue", "continue", "x/16i $pc"}
	rs := batch(t, one, cmds...)
	listing := fmt.Sprint(rs[3]["text"])
	m := regexp.MustCompile(`(?m)^\s*(0x[0-9a-f]+)\s+<[^>]*>:\s*cpuid`).FindStringSubmatch(listing)
	if m == nil {
		t.Fatalf("no cpuid in the listing of cache_levels (the patched code must read as the program's):\n%s", listing)
	}
	site, _ := strconv.ParseUint(m[1], 0, 64)
	start := stopOf(t, rs[2])["pc"].(string)
	steps := 12
	for range steps {
		cmds = append(cmds, "stepi", "info registers rip")
	}
	rs = batch(t, one, cmds...)
	pcOf := func(r map[string]any) uint64 {
		v, _ := strconv.ParseUint(fmt.Sprint(stopOf(t, r)["pc"]), 0, 64)
		return v
	}
	lo, _ := strconv.ParseUint(start, 0, 64)
	crossed := -1
	prev := lo
	for i := range steps {
		pc := pcOf(rs[4+2*i])
		if pc < lo || pc > site+64 {
			t.Fatalf("stepi %d stopped at %#x, outside cache_levels (from %#x, cpuid at %#x): in the stub?", i+1, pc, lo, site)
		}
		if prev <= site && pc > site {
			crossed = i
			break
		}
		prev = pc
	}
	if crossed < 0 {
		t.Fatalf("%d stepi from %s never passed the cpuid at %#x", steps, start, site)
	}
	// Back from just past the cpuid: onto its window's first instruction.
	cmds = append(cmds[:4+2*(crossed+1)], "reverse-stepi", fmt.Sprintf("x/2xb %#x", site))
	rs = batch(t, one, cmds...)
	if back := pcOf(rs[len(rs)-2]); back != prev {
		t.Errorf("reverse-stepi after the cpuid went to %#x, want %#x, where the stepi over it started", back, prev)
	}
	if b := fmt.Sprint(rs[len(rs)-1]["value"]); !strings.Contains(b, "0x0f 0xa2") {
		t.Errorf("x/2xb at the cpuid shows %s, not the program's cpuid", b)
	}
}

// TestPatchedRdtsc: an rdtsc that trapped is patched to be read by the
// hook with no stop from then on (testdata/rdtsc.c: 20000 reads at one
// site), its values recorded as they were read (never going back) and
// given back in replay; the debugger's finish out of the function sees
// a recorded value.
func TestPatchedRdtsc(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "rdtsc.c", "-O2")
	trace := filepath.Join(t.TempDir(), "rdtsc.rwd")
	stdout, stderr, code := record(t, trace, prog, "20000")
	if code != 0 || !strings.Contains(string(stdout), "20000 reads, 0 went back, time went on") {
		t.Fatalf("record: exit %d: %s%s", code, stdout, stderr)
	}
	info := run(t, runOpts{}, rewind(t), "info", trace)
	m := regexp.MustCompile(`(?m)^patched:\s+(\d+) rdtsc read by the hook page`).FindSubmatch(info.Stdout)
	if m == nil {
		t.Fatalf("info says nothing of patched rdtsc:\n%s", info.Stdout)
	}
	if n, _ := strconv.Atoi(string(m[1])); n < 19000 {
		t.Errorf("%d of 20000 rdtsc read by the hook: the site was not patched", n)
	}
	rout, rerr, code := replayCheck(t, trace)
	if code != 0 || !strings.Contains(string(rout), string(stdout)) {
		t.Fatalf("replay --check: exit %d: %s%s", code, rout, rerr)
	}
	values := map[string]bool{}
	r := run(t, runOpts{}, rewind(t), "events", "--json", "--type", "rdtsc", trace)
	valueRE := regexp.MustCompile(`= (0x[0-9a-f]+)$`)
	for _, e := range ndjson[map[string]any](t, r) {
		if v := valueRE.FindStringSubmatch(fmt.Sprint(e["text"])); v != nil {
			values[v[1]] = true
		}
	}
	rs := batch(t, trace, "break read_tsc", "continue", "continue", "continue", "finish")
	wantOK(t, rs[4])
	val, _ := rs[4]["value"].(map[string]any)
	ret := fmt.Sprint(val["returned"])
	v, err := strconv.ParseUint(ret, 0, 64)
	if err != nil || !values[fmt.Sprintf("%#x", v)] {
		t.Errorf("finish out of the third read_tsc returned %q, not a recorded value (%d recorded)", ret, len(values))
	}
}

// TestCpuidWithoutFaulting: a recording made where cpuid traps replays on a
// CPU that cannot trap it (another vendor, a hypervisor without the
// feature), simulated with REWIND_REPLAY_NO_CPUID_FAULTING=1: each cpuid
// of the recording is reached with a breakpoint and given its recorded
// answer, and the debugger stops and steps there as where it traps.
func TestCpuidWithoutFaulting(t *testing.T) {
	t.Parallel()
	if !cpuidFaulting(t) {
		t.Skip("this CPU does not trap cpuid (no cpuid_fault): no recording holds its answers")
	}
	noFault := runOpts{Env: []string{"REWIND_REPLAY_NO_CPUID_FAULTING=1"}}
	prog := buildC(t, "cpuid.c", "-O1")
	for _, tc := range []struct {
		name string
		argv []string
	}{
		{"cpuid", []string{prog}},
		{"shell", []string{"/bin/sh", "-c", "ls / >/dev/null; echo done"}},
		// A cpuid in code written after the last system call before it:
		// a breakpoint set in memory first would be overwritten.
		{"jit", []string{buildC(t, "jitcpuid.c", "-O1")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			trace := filepath.Join(t.TempDir(), tc.name+".rwd")
			rec := mustRecord(t, trace, tc.argv[0], tc.argv[1:]...)
			events, progStderr := checkRecorded(t, rec.Stderr, trace, "")
			info := run(t, runOpts{}, rewind(t), "info", trace)
			if !regexp.MustCompile(`(?m)^  cpuid +[1-9]`).Match(info.Stdout) {
				t.Fatalf("no cpuid event in the recording:\n%s", info.Stdout)
			}
			r := run(t, noFault, rewind(t), "replay", "--check", trace)
			checkReplayed(t, events, rec.Stdout, progStderr, r.Stdout, r.Stderr, r.Code)
		})
		// Recorded where cpuid cannot fault (REWIND_RECORD_NO_CPUID_FAULTING):
		// the cpuids found in the code are trapped, their answers logged,
		// and each site then asks the hook's table; replayed here, with and
		// without the trap.
		t.Run(tc.name+"-patched", func(t *testing.T) {
			t.Parallel()
			trace := filepath.Join(t.TempDir(), tc.name+".rwd")
			rec := recordOpts(t, runOpts{Env: []string{"REWIND_RECORD_NO_CPUID_FAULTING=1"}}, trace, tc.argv[0], tc.argv[1:]...)
			if rec.Code != 0 {
				t.Fatalf("record exited %d\nstderr:\n%s", rec.Code, tail(rec.Stderr))
			}
			events, progStderr := checkRecorded(t, rec.Stderr, trace, "")
			info := run(t, runOpts{}, rewind(t), "info", trace)
			m := regexp.MustCompile(`(?m)^  cpuid +(\d+)`).FindSubmatch(info.Stdout)
			if m == nil || string(m[1]) == "0" || !regexp.MustCompile(`cpuid answered from a table of [1-9]`).Match(info.Stdout) {
				t.Fatalf("no cpuid event, or no table, in the recording:\n%s", info.Stdout)
			}
			// Each site traps once, then asks the hook; the child that
			// execs cpuid.c again has them patched at its exec (550
			// questions in all, 22 stops as under CPUID faulting here).
			if n, _ := strconv.Atoi(string(m[1])); tc.name == "cpuid" && n > 40 {
				t.Errorf("%d cpuid stops: the sites are not patched after their first", n)
			}
			for _, opts := range []runOpts{{}, noFault} {
				r := run(t, opts, rewind(t), "replay", "--check", trace)
				checkReplayed(t, events, rec.Stdout, progStderr, r.Stdout, r.Stderr, r.Code)
			}
		})
	}
	// The debugger at a cpuid the recording trapped: the same stops and
	// steps with and without the trap.
	trace := filepath.Join(t.TempDir(), "steps.rwd")
	mustRecord(t, trace, prog)
	ps := run(t, runOpts{}, rewind(t), "ps", trace)
	fields := strings.Fields(strings.Split(string(ps.Stdout), "\n")[1])
	args := []string{"replay", "-p", fields[0], "--batch", "-ex", "break cache_levels", "-ex", "continue",
		"-ex", "stepi 12", "-ex", "info registers rip", "-ex", "reverse-stepi 7", "-ex", "stepi 3",
		"-ex", "print $rbx", "-ex", "continue", trace}
	want := run(t, runOpts{}, rewind(t), args...)
	got := run(t, noFault, rewind(t), args...)
	if !strings.Contains(string(want.Stdout), "Breakpoint 1, ") || string(got.Stdout) != string(want.Stdout) {
		t.Errorf("the debugger without the trap:\n%s\nwith it:\n%s\nstderr:\n%s", got.Stdout, want.Stdout, tail(got.Stderr))
	}
}
