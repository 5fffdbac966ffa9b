package debugger

import (
	"strconv"
	"strings"
)

// This file is the breakpoint and watchpoint commands as Go calls, for
// servers (DAP, the session file) that hold numbers and locations rather
// than command lines: they get the typed value the command made.

// SetBreakpoint is break LOC [if COND]: the breakpoint made (nil when it
// could not be) and the command's result, whose text says where it
// resolved, that it is pending, or why it failed.
func (s *Session) SetBreakpoint(loc, cond string) (*BreakpointSet, Result) {
	args := strings.TrimSpace(loc)
	if cond = strings.TrimSpace(cond); cond != "" {
		args += " if " + cond
	}
	res := Result{Command: "break " + args}
	err := s.cmdBreak(args, false, &res)
	return madeValue[BreakpointSet](s.finish(res, err))
}

// SetWatchpoint is watch EXPR, or awatch EXPR when access (reads stop it
// too): the watchpoint made (nil when it could not be) and the result.
func (s *Session) SetWatchpoint(expr string, access bool) (*WatchpointSet, Result) {
	name := "watch"
	if access {
		name = "awatch"
	}
	expr = strings.TrimSpace(expr)
	res := Result{Command: name + " " + expr}
	err := s.cmdWatch(name, expr, &res)
	return madeValue[WatchpointSet](s.finish(res, err))
}

// madeValue returns what a command that makes something made, with its
// result: nil when the command failed and made nothing.
func madeValue[T any](res Result) (*T, Result) {
	v, ok := res.Value.(T)
	if !res.OK || !ok {
		return nil, res
	}
	return &v, res
}

// DeleteBreakpoint is delete N: it removes breakpoint or watchpoint id.
func (s *Session) DeleteBreakpoint(id int) error {
	var res Result
	return s.cmdDelete(strconv.Itoa(id), &res)
}

// madeID is the number of the breakpoint or watchpoint a result made (0
// for none).
func madeID(res Result) int {
	switch v := res.Value.(type) {
	case BreakpointSet:
		return v.ID
	case WatchpointSet:
		return v.ID
	}
	return 0
}
