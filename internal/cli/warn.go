package cli

import (
	"fmt"
	"os"

	"github.com/rewind-debugger/rewind/engine/trace"
	"github.com/rewind-debugger/rewind/internal/frontend"
)

// warnLine shows a line of frontend.Warnings on stderr, where the CLI's
// user reads what is wrong with a recording.
func warnLine(l string) { fmt.Fprintln(os.Stderr, l) }

// warnTrace tells, in one line on stderr, why not all of a trace is usable.
func warnTrace(st trace.Status) {
	for _, l := range frontend.Warnings(st, nil) {
		warnLine(l)
	}
}

// warnMachine warns, a line each, about what differs between this machine
// and the recording's in ways that can make the replay diverge.
func warnMachine(h *trace.Header) {
	for _, l := range frontend.Warnings(trace.Status{}, h) {
		warnLine(l)
	}
}
