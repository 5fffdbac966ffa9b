package cli

import (
	"fmt"
	"os"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/internal/frontend"
)

// restoreSession sets up the breakpoints and watchpoints of the trace's
// session file (what the UI kept), saying on stderr what it did and what it
// could not: batch mode and MCP do this only when asked (--session), so
// that their results depend on their commands alone.
func restoreSession(s *debugger.Session, trace string) {
	f, err := debugger.LoadSessionFile(trace)
	if err != nil {
		fmt.Fprintf(os.Stderr, "rewind: warning: %s\n", oneLine(err.Error()))
		return
	}
	n, _, problems := s.Restore(f)
	for _, p := range problems {
		fmt.Fprintf(os.Stderr, "rewind: %s\n", oneLine(p))
	}
	fmt.Fprintf(os.Stderr, "rewind: session: %d of %d breakpoints and watchpoints restored\n", n, len(f.Breakpoints)+len(f.Watchpoints))
}

// sessionOptions are replay's flags for the session it debugs in, passed
// down to each way of debugging (the UI, batch mode, gdbserver).
type sessionOptions struct {
	process int32 // the recorded pid to debug (0: the default choice)
	budget  int64 // memory of checkpoints in bytes (0: no checkpoints)
}

// openSession opens a debugging session, for batch mode, gdbserver and
// the UI, giving warn (nil: nobody, the UI shows them itself) what is
// wrong with the trace and with this machine for it.
func openSession(path string, o sessionOptions, warn func(string)) (*debugger.Session, error) {
	if o.budget < 0 {
		return nil, fmt.Errorf("--checkpoint-memory must be 0 or more")
	}
	return frontend.Open(path, frontend.OpenOptions{
		Options: debugger.Options{CheckpointBudget: o.budget, NoCheckpoints: o.budget == 0, Process: o.process},
		Warn:    warn,
	})
}
