package replay

import (
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/rewind-debugger/rewind/engine/trace"
	"github.com/rewind-debugger/rewind/internal/testprog"
)

// TestPreemptSearchGetsTrampoline: a search that starts where no
// trampoline can be had (refuseFirstTrampoline: as a thread just back
// from a blocking call stands) gets one at its first pass. Without, each
// pass of a hot loop is a stop, and a point millions of passes in is not
// reached within the search's limit (main_pthread_exit's workers, whose
// first preemption follows their barrier's futex).
func TestPreemptSearchGetsTrampoline(t *testing.T) {
	path := testprog.RecordCT(t, filepath.Join("..", "..", "testdata", "conformance", "main_pthread_exit.c"), nil)
	rd, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	preempts := 0
	for {
		e, err := rd.Next()
		if err != nil {
			break
		}
		if e.Kind == trace.KindPreempt {
			preempts++
		}
	}
	rd.Close()
	if preempts == 0 {
		t.Fatal("the recording has no preemption: nothing to search for")
	}

	refuseFirstTrampoline, searchLimit = true, 20*time.Second
	defer func() { refuseFirstTrampoline, searchLimit = false, 60*time.Second }()
	s, err := Open(path, Options{Stdout: io.Discard, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Run(); err != nil {
		t.Fatalf("replay of %d preemptions: %v", preempts, err)
	}
}

// TestSamePassRegs: a pass matches the recorded point's registers whatever
// the resume flag says (a fault's stop has it, a breakpoint's not), and
// no other difference is forgiven.
func TestSamePassRegs(t *testing.T) {
	var want trace.Regs
	want[trace.RIP], want[trace.RAX], want[trace.EFLAGS] = 0x401000, 7, 0x10206
	for _, tc := range []struct {
		name  string
		edit  func(r *trace.Regs)
		match bool
	}{
		{"identical", func(r *trace.Regs) {}, true},
		{"resume flag clear", func(r *trace.Regs) { r[trace.EFLAGS] &^= eflagsRF }, true},
		{"another flag", func(r *trace.Regs) { r[trace.EFLAGS] ^= 0x40 }, false},
		{"the fixed bit clear", func(r *trace.Regs) { r[trace.EFLAGS] &^= eflagsFixed }, true},
		{"a register", func(r *trace.Regs) { r[trace.RAX]++ }, false},
	} {
		got := want
		tc.edit(&got)
		if m := samePassRegs(&got, &want, 0); m != tc.match {
			t.Errorf("%s: match %v, want %v", tc.name, m, tc.match)
		}
		// On another CPU model, the arithmetic flags do not count
		// (their undefined ones are the CPU's).
		loose := tc.match || tc.name == "another flag"
		if m := samePassRegs(&got, &want, eflagsStatus); m != loose {
			t.Errorf("%s, another CPU: match %v, want %v", tc.name, m, loose)
		}
	}
}
