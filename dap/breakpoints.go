package dap

import (
	"fmt"

	"github.com/google/go-dap"

	"github.com/rewind-debugger/rewind/debugger"
)

// made is a breakpoint or watchpoint a client asked for, as the session
// made it: its number, whether it is pending (verified later, when a
// library brings its location), its line (0: none), and the result whose
// text explains a failure or the pending state.
type made struct {
	id      int
	pending bool
	line    int
	res     debugger.Result
}

// breakpointMaker makes break LOC [if COND].
func (sv *server) breakpointMaker(loc, cond string) func() made {
	return func() made {
		b, res := sv.s.SetBreakpoint(loc, cond)
		if b == nil {
			return made{res: res}
		}
		return made{id: b.ID, pending: b.Pending, line: b.Line, res: res}
	}
}

// replace deletes the session's breakpoints ids (a kind the client sets
// anew) and makes one breakpoint per maker, in order, each answered with
// the line it resolved to or why it could not be set.
func (sv *server) replace(ids []int, makers []func() made) ([]int, []dap.Breakpoint) {
	for _, id := range ids {
		// One at a time: one the session already dropped fails alone,
		// and the client has nothing to be told of it.
		_ = sv.s.DeleteBreakpoint(id)
	}
	var kept []int
	out := make([]dap.Breakpoint, 0, len(makers))
	for _, mk := range makers {
		m := mk()
		if !m.res.OK {
			out = append(out, dap.Breakpoint{Verified: false, Message: m.res.Error})
			continue
		}
		kept = append(kept, m.id)
		bp := dap.Breakpoint{Id: m.id, Verified: !m.pending, Line: m.line}
		if !bp.Verified {
			bp.Message = m.res.Text
		}
		out = append(out, bp)
	}
	return kept, out
}

func (sv *server) setBreakpoints(r *dap.SetBreakpointsRequest) error {
	path := sourcePath(r.Arguments.Source)
	if path == "" {
		return fmt.Errorf("setBreakpoints: the source has no path")
	}
	var makers []func() made
	bps := r.Arguments.Breakpoints
	if bps == nil {
		for _, l := range r.Arguments.Lines { // the protocol's older form
			bps = append(bps, dap.SourceBreakpoint{Line: l})
		}
	}
	for _, b := range bps {
		makers = append(makers, sv.breakpointMaker(fmt.Sprintf("%s:%d", path, b.Line), b.Condition))
	}
	kept, out := sv.replace(sv.sourceBps[path], makers)
	sv.sourceBps[path] = kept
	for i := range out {
		src := r.Arguments.Source
		out[i].Source = &src
		if b := bps[i]; out[i].Verified && (b.HitCondition != "" || b.LogMessage != "") {
			out[i].Message = "hit counts and log messages are not supported: it stops at every hit that meets the condition"
		}
	}
	sv.send(&dap.SetBreakpointsResponse{Response: response(r), Body: dap.SetBreakpointsResponseBody{Breakpoints: out}})
	return nil
}

func (sv *server) setFunctionBreakpoints(r *dap.SetFunctionBreakpointsRequest) error {
	var makers []func() made
	for _, b := range r.Arguments.Breakpoints {
		makers = append(makers, sv.breakpointMaker(b.Name, b.Condition))
	}
	kept, out := sv.replace(sv.funcBps, makers)
	sv.funcBps = kept
	sv.send(&dap.SetFunctionBreakpointsResponse{Response: response(r), Body: dap.SetFunctionBreakpointsResponseBody{Breakpoints: out}})
	return nil
}

// dataBreakpointInfo says whether a variable (a child of a variables
// reference, or an expression in a frame) can be watched: its data id is
// the raw location (`*(TYPE *)ADDR`), which names the same memory
// whatever frame is selected when the breakpoint is set.
func (sv *server) dataBreakpointInfo(r *dap.DataBreakpointInfoRequest) error {
	a := r.Arguments
	var p debugger.VarPath
	if a.VariablesReference != 0 {
		ref, err := sv.varRefOf(a.VariablesReference)
		if err != nil {
			return err
		}
		if ref.regs {
			return sv.noData(r, "registers cannot be watched: watch memory")
		}
		nodes, err := sv.s.Expand(ref.path)
		if err != nil {
			return err
		}
		found := -1
		for i, n := range nodes {
			if n.Name == a.Name {
				found = i
			}
		}
		if found < 0 {
			return sv.noData(r, fmt.Sprintf("no variable %q here", a.Name))
		}
		p = ref.path
		p.Path = append(append([]int(nil), p.Path...), found)
	} else {
		f, err := sv.frame(a.FrameId)
		if err != nil {
			return err
		}
		p = debugger.VarPath{Thread: f.thread, Frame: f.level, Scope: debugger.ScopeExpr, Expr: a.Name}
	}
	loc, size, err := sv.s.Location(p)
	if err != nil {
		return sv.noData(r, err.Error())
	}
	switch size {
	case 1, 2, 4, 8:
	default:
		return sv.noData(r, fmt.Sprintf("%s is %d bytes: hardware watchpoints cover 1, 2, 4 or 8 (watch a field or an element)", a.Name, size))
	}
	sv.send(&dap.DataBreakpointInfoResponse{Response: response(r), Body: dap.DataBreakpointInfoResponseBody{
		DataId: loc, Description: fmt.Sprintf("%s (%s)", a.Name, loc),
		AccessTypes: []dap.DataBreakpointAccessType{"write", "readWrite"},
	}})
	return nil
}

// noData answers dataBreakpointInfo for a value that cannot be watched.
func (sv *server) noData(r *dap.DataBreakpointInfoRequest, why string) error {
	sv.send(&dap.DataBreakpointInfoResponse{Response: response(r), Body: dap.DataBreakpointInfoResponseBody{Description: why}})
	return nil
}

func (sv *server) setDataBreakpoints(r *dap.SetDataBreakpointsRequest) error {
	var makers []func() made
	for _, b := range r.Arguments.Breakpoints {
		// The hardware traps reads only with writes: an access watch.
		access := b.AccessType == "readWrite" || b.AccessType == "read"
		makers = append(makers, func() made {
			w, res := sv.s.SetWatchpoint(b.DataId, access)
			if w == nil {
				return made{res: res}
			}
			return made{id: w.ID, res: res}
		})
	}
	kept, out := sv.replace(sv.dataBps, makers)
	sv.dataBps = kept
	for i, b := range r.Arguments.Breakpoints {
		if b.Condition != "" || b.HitCondition != "" {
			out[i].Message = "conditions on data breakpoints are not supported: it stops at every write"
		}
	}
	sv.send(&dap.SetDataBreakpointsResponse{Response: response(r), Body: dap.SetDataBreakpointsResponseBody{Breakpoints: out}})
	return nil
}
