package cli

import (
	"fmt"
	"os"

	"github.com/rewind-debugger/rewind/debugger"
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

// sessionProcess is the -p of replay: the process sessions open on (0:
// the default choice).
var sessionProcess int32

// openSession opens a debugging session with a checkpoint budget in bytes
// (0: no checkpoints), for batch mode and the UI.
func openSession(path string, budget int64) (*debugger.Session, error) {
	if budget < 0 {
		return nil, fmt.Errorf("--checkpoint-memory must be 0 or more")
	}
	return debugger.Open(path, debugger.Options{CheckpointBudget: budget, NoCheckpoints: budget == 0, Process: sessionProcess})
}
