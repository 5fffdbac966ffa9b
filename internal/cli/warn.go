package cli

import (
	"fmt"
	"os"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/engine/machine"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// warnTrace tells, in one line on stderr, why not all of a trace is usable.
func warnTrace(st trace.Status) {
	if st.Message != "" {
		fmt.Fprintf(os.Stderr, "rewind: %s\n", st.Message)
	}
}

// warnMachine warns, a line each, about what differs between this machine
// and the recording's in ways that can make the replay diverge.
func warnMachine(h *trace.Header) {
	for _, w := range machine.Warnings(h) {
		fmt.Fprintf(os.Stderr, "rewind: warning: %s\n", w)
	}
}

// warnSession says on stderr, in one line each, what is wrong with a
// session's trace (cut short, damaged) and with this machine for it.
func warnSession(s *debugger.Session) {
	warnTrace(s.TraceStatus())
	warnMachine(s.Header())
}
