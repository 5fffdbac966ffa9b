package e2e

import (
	"path/filepath"
	"testing"
)

// TestSiginfoAwayFromSignal: $_siginfo belongs to the stop at a signal.
// Where no signal was recorded (the start, a breakpoint reached going
// back) it cannot be read, as gdb says of a target without one, but
// keeps its type; back at the signal it is the signal again; after the
// end of the program it is void, as in gdb once the program has gone.
func TestSiginfoAwayFromSignal(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "source/signals.c")
	trace := filepath.Join(t.TempDir(), "s.rwd")
	record(t, trace, prog)
	rs := batch(t, trace, "print $_siginfo", "continue", "print $_siginfo.si_signo", "break main",
		"reverse-continue", "print $_siginfo.si_signo", "whatis $_siginfo", "continue",
		"print $_siginfo._sifields._sigfault.si_addr", "delete", "continue", "print $_siginfo.si_code",
		"continue", "print $_siginfo")
	for _, c := range []struct {
		i          int
		text, fail string
	}{
		{0, "", "Unable to read siginfo"},
		{2, "$1 = 11", ""},
		{5, "", "Unable to read siginfo"},
		{6, "type = struct siginfo", ""},
		{8, "$2 = (void *) 0x1234", ""},
		{11, "$3 = -6", ""},
		{13, "$4 = void", ""},
	} {
		r := rs[c.i]
		if got := field(r, "text"); c.text != "" && got != c.text {
			t.Errorf("%s: %q, want %q", field(r, "command"), got, c.text)
		}
		if c.fail != "" && (r["ok"] != false || field(r, "error") != c.fail) {
			t.Errorf("%s: %v, want the error %q", field(r, "command"), r, c.fail)
		}
	}
}
