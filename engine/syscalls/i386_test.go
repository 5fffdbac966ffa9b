package syscalls

import (
	"strings"
	"testing"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// TestNamesI386MatchHeader checks the i386 names against the headers of
// this machine, and the common numbers after them.
func TestNamesI386MatchHeader(t *testing.T) {
	checkHeaderNames(t, "/usr/include/x86_64-linux-gnu/asm/unistd_32.h", "NameI386", NameI386, 400)
	for n, want := range map[int]string{451: "cachestat", 452: "fchmodat2", 453: "syscall_453", 462: "mseal", 2000: "syscall_2000", -1: "syscall_-1"} {
		if got := NameI386(n); got != want {
			t.Errorf("NameI386(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestI386Equivalents checks that every i386 call said to be the same as an
// x86-64 one has the same name (give or take the 32-bit id suffix).
func TestI386Equivalents(t *testing.T) {
	for n, name := range i386Same {
		i := NameI386(n)
		if i != name && strings.TrimSuffix(i, "32") != name && !(i == "sendfile64" && name == "sendfile") {
			t.Errorf("i386 %d (%s) said to be x86-64 %s", n, i, name)
		}
	}
}

// TestFromRegs decodes calls from entry registers in both conventions.
func TestFromRegs(t *testing.T) {
	var regs trace.Regs
	regs[trace.RDI], regs[trace.RSI], regs[trace.RDX], regs[trace.R10], regs[trace.R8], regs[trace.R9] = 1, 2, 3, 4, 5, 6
	regs[trace.RBX], regs[trace.RCX], regs[trace.RBP] = 0xffffffff00000001, 0x40001000, 9
	for _, tc := range []struct {
		name     string
		orig     uint64
		i386     bool
		wantNr   int
		wantArgs [6]uint64
		wantName string
	}{
		{"64-bit write", 1, false, 1, [6]uint64{1, 2, 3, 4, 5, 6}, "write"},
		{"i386 write", 4, true, 1, [6]uint64{1, 0x40001000, 3, 2, 1, 9}, "[i386] write"},
		{"i386 getpid", 20, true, 39, [6]uint64{1, 0x40001000, 3, 2, 1, 9}, "[i386] getpid"},
		{"i386 getuid32", 199, true, 102, [6]uint64{1, 0x40001000, 3, 2, 1, 9}, "[i386] getuid32"},
		{"i386 stat: other layout", 106, true, NoEquivalent, [6]uint64{1, 0x40001000, 3, 2, 1, 9}, "[i386] stat"},
		{"i386 socketcall", 102, true, NoEquivalent, [6]uint64{1, 0x40001000, 3, 2, 1, 9}, "[i386] socketcall"},
	} {
		regs[trace.OrigRAX] = tc.orig
		c := FromRegs(&regs, tc.i386)
		if c.Nr != tc.wantNr || c.Args != tc.wantArgs || CallName(&c) != tc.wantName || c.I386 != tc.i386 {
			t.Errorf("%s: got Nr %d args %x name %q i386 %v, want %d %x %q", tc.name, c.Nr, c.Args, CallName(&c), c.I386, tc.wantNr, tc.wantArgs, tc.wantName)
		}
		if _, ok := Lookup(c.Nr); ok != (tc.wantNr != NoEquivalent) {
			t.Errorf("%s: Lookup(%d) = %v", tc.name, c.Nr, ok)
		}
	}
}
