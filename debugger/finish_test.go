package debugger

import "testing"

// TestFinishOutermost: finish and reverse-finish from main, which has no
// caller to go to, refuse as gdb does, and the session stays where it was.
func TestFinishOutermost(t *testing.T) {
	s := openRecorded(t, corruptTrace, "start")
	at := s.tl.Now()
	for _, c := range []struct{ cmd, want string }{
		{"finish", `"finish" not meaningful in the outermost frame.`},
		{"reverse-finish", `"reverse-finish" not meaningful in the outermost frame.`},
	} {
		r := s.Execute(c.cmd)
		if r.OK || r.Error != c.want {
			t.Errorf("%s: ok %v, error %q; want %q", c.cmd, r.OK, r.Error, c.want)
		}
		if s.tl.Now() != at {
			t.Errorf("%s moved the session from %v to %v", c.cmd, at, s.tl.Now())
		}
	}
}
