// Package frontend is what rewind's front ends do the same way: open a
// debugging session on a recording (the CLI's replay, batch mode,
// gdbserver, why and mcp, and the DAP server), and record a program into a
// trace (rewind record and attach, rewind PROG, rewind demo, each run of
// record --until-fail, and DAP's launch of a program). It sits on debugger
// and engine/record, below every front end, so that dap imports it without
// importing the CLI.
package frontend

import (
	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/engine/machine"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// OpenOptions say how to open a session.
type OpenOptions struct {
	debugger.Options
	// Warn, when set, is given the lines of Warnings once the session is
	// open: each front end shows them where its user looks (stderr, an
	// editor's console).
	Warn func(line string)
}

// Open opens a debugging session on the recording at path. Its errors are
// debugger.Open's, unwrapped: each front end says in its own words what
// failed (mcp:, launch:).
func Open(path string, o OpenOptions) (*debugger.Session, error) {
	s, err := debugger.Open(path, o.Options)
	if err != nil {
		return nil, err
	}
	if o.Warn != nil {
		for _, l := range Warnings(s.TraceStatus(), s.Header()) {
			o.Warn(l)
		}
	}
	return s, nil
}

// Warnings are the lines that say what is wrong with a trace of status st
// (cut short, damaged: how many events are usable) and with this machine
// for replaying the recording of header h (another CPU, missing features),
// each ready to show: a user who opens a recording by any front end reads
// the same words. A nil h leaves the machine out (the trace's status
// before the recording is open).
func Warnings(st trace.Status, h *trace.Header) []string {
	var out []string
	if st.Message != "" {
		out = append(out, "rewind: "+st.Message)
	}
	if h == nil {
		return out
	}
	for _, w := range machine.Warnings(h) {
		out = append(out, "rewind: warning: "+w)
	}
	return out
}
