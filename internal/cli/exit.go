package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// exitError carries a process exit status through cobra without printing.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// exitPartialTrace is the status of info, events and replay --check on an
// unfinished or damaged trace: they do their work on the usable events and
// say in one line on stderr why the rest is not usable. A divergence (1)
// takes precedence.
const exitPartialTrace = 2

// traceStatusExit warns about an incomplete trace and returns the
// exitPartialTrace status for it, nil for a complete one.
func traceStatusExit(st trace.Status) error {
	if st.Condition == trace.Complete {
		return nil
	}
	warnTrace(st)
	return &exitError{exitPartialTrace}
}

// oneLine keeps error reports to one line, as users' scripts expect.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// exitTraceFailed is the status of rewind record when it could not write a
// complete trace, whatever the program did: as timeout(1) and env(1) do
// with 125, it keeps rewind's own failure apart from the statuses programs
// use (1 and 2 are common ones, and a Go program that panics exits 2).
const exitTraceFailed = 125

// traceFailed reports a recording without a complete trace.
func traceFailed(err error) error {
	fmt.Fprintf(os.Stderr, "rewind: %s\n", oneLine(err.Error()))
	return &exitError{exitTraceFailed}
}
