package mcpserver

import (
	"strings"
	"testing"

	"github.com/rewind-debugger/rewind/debugger"
)

// TestHabits: gdb's habits over MCP, the same as in batch mode and the
// UI: a display comes back with each stop, and quit leaves the session
// to the client (the server goes on).
func TestHabits(t *testing.T) {
	cs := connect(t, traceOf(t))
	steps := []struct {
		cmd, want string
	}{
		{"break sum", "Breakpoint 1 at"},
		{"continue", "Breakpoint 1, sum"},
		{"display/x total", "1: /x total = 0x0"},
		{"quit", "the MCP client ends the session"},
		{"printf \"%s\\n\", head->name", "alpha"},
		{"continue", "1: /x total = "},
	}
	for _, st := range steps {
		r := decode[debugger.Result](t, call(t, cs, toolRunCommand, CommandInput{Command: st.cmd}))
		if !r.OK || !strings.Contains(r.Text, st.want) || r.Quit {
			t.Errorf("%s: %+v, want ok with %q", st.cmd, r, st.want)
		}
		if st.cmd == "continue" && st.want != "Breakpoint 1, sum" && len(r.Displays) != 1 {
			t.Errorf("%s: displays %+v, want the total display", st.cmd, r.Displays)
		}
	}
}
