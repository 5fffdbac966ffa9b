package dap

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/google/go-dap"

	"github.com/rewind-debugger/rewind/debugger"
)

// dispatch answers the requests that need the session (held by the
// caller). An error becomes the request's error response.
func (sv *server) dispatch(req dap.RequestMessage) error {
	switch r := req.(type) {
	case *dap.ConfigurationDoneRequest:
		sv.send(&dap.ConfigurationDoneResponse{Response: response(req)})
		if sv.launch.StopOnEntry {
			sv.move(0, "goto start", "entry")
		} else {
			// As rewind replay: the first line of main (user breakpoints
			// met on the way stop first).
			sv.move(0, "start", "entry")
		}
	case *dap.ContinueRequest:
		sv.send(&dap.ContinueResponse{Response: response(req), Body: dap.ContinueResponseBody{AllThreadsContinued: true}})
		sv.move(r.Arguments.ThreadId, "continue", "")
	case *dap.ReverseContinueRequest:
		sv.send(&dap.ReverseContinueResponse{Response: response(req)})
		sv.move(r.Arguments.ThreadId, "reverse-continue", "")
	case *dap.NextRequest:
		sv.send(&dap.NextResponse{Response: response(req)})
		sv.move(r.Arguments.ThreadId, byGranularity(r.Arguments.Granularity, "next", "nexti"), "")
	case *dap.StepInRequest:
		sv.send(&dap.StepInResponse{Response: response(req)})
		sv.move(r.Arguments.ThreadId, byGranularity(r.Arguments.Granularity, "step", "stepi"), "")
	case *dap.StepOutRequest:
		sv.send(&dap.StepOutResponse{Response: response(req)})
		sv.move(r.Arguments.ThreadId, "finish", "")
	case *dap.StepBackRequest:
		sv.send(&dap.StepBackResponse{Response: response(req)})
		sv.move(r.Arguments.ThreadId, byGranularity(r.Arguments.Granularity, "reverse-next", "reverse-stepi"), "")
	case *dap.SetBreakpointsRequest:
		return sv.setBreakpoints(r)
	case *dap.SetFunctionBreakpointsRequest:
		return sv.setFunctionBreakpoints(r)
	case *dap.SetExceptionBreakpointsRequest:
		// Signals always stop a replay: there is no filter to set.
		sv.send(&dap.SetExceptionBreakpointsResponse{Response: response(req)})
	case *dap.DataBreakpointInfoRequest:
		return sv.dataBreakpointInfo(r)
	case *dap.SetDataBreakpointsRequest:
		return sv.setDataBreakpoints(r)
	case *dap.ThreadsRequest:
		sv.send(&dap.ThreadsResponse{Response: response(req), Body: dap.ThreadsResponseBody{Threads: sv.listThreads()}})
	case *dap.StackTraceRequest:
		return sv.stackTrace(r)
	case *dap.ScopesRequest:
		return sv.scopes(r)
	case *dap.VariablesRequest:
		return sv.variables(r)
	case *dap.EvaluateRequest:
		return sv.evaluate(r)
	case *dap.GotoTargetsRequest:
		return sv.gotoTargets(r)
	case *dap.ExceptionInfoRequest:
		return sv.exceptionInfo(r)
	case *dap.SourceRequest:
		return sv.source(r)
	case *dap.GotoRequest:
		i := r.Arguments.TargetId - 1
		if i < 0 || i >= len(sv.targets) {
			return fmt.Errorf("goto: no target %d (ask gotoTargets at this stop)", r.Arguments.TargetId)
		}
		sv.send(&dap.GotoResponse{Response: response(req)})
		sv.move(0, "goto "+sv.targets[i], "goto")
	default:
		return fmt.Errorf("unsupported request %q", req.GetRequest().Command)
	}
	return nil
}

// byGranularity picks the instruction form of a step when asked.
func byGranularity(g dap.SteppingGranularity, line, instruction string) string {
	if g == "instruction" {
		return instruction
	}
	return line
}

// move runs a motion command in the background (the caller has answered
// the request), then tells where it stopped. reason overrides the stop's
// own for a plain arrival (configurationDone's "entry", goto's "goto").
func (sv *server) move(thread int, command, reason string) {
	sv.running.Store(true)
	sv.pause.Store(false)
	sv.motions.Add(1)
	go func() {
		defer sv.motions.Done()
		sv.mu.Lock()
		defer sv.mu.Unlock()
		res := sv.s.ExecuteIn(int32(thread), 0, command)
		sv.resetHandles()
		sv.threads = sv.listThreads()
		// Requests that the stopped event brings wait for the lock instead
		// of being told the recording is running, and see the stop.
		sv.running.Store(false)
		sv.stopped(res, reason, sv.pause.Load())
	}()
}

// resetHandles forgets the frames, variables, targets and signal of the
// last stop.
func (sv *server) resetHandles() {
	sv.frames, sv.vars, sv.targets, sv.exception = nil, nil, nil, nil
}

// exceptionInfo describes the signal the last stop was for: editors ask
// at every stop of reason exception (dap-mode whatever the capabilities).
func (sv *server) exceptionInfo(r *dap.ExceptionInfoRequest) error {
	if sv.exception == nil || (r.Arguments.ThreadId != 0 && int32(r.Arguments.ThreadId) != sv.exceptionThread) {
		return errors.New("exceptionInfo: this thread did not stop for a signal")
	}
	sv.send(&dap.ExceptionInfoResponse{Response: response(r), Body: *sv.exception})
	return nil
}

// stopped sends the stopped event of a motion's result.
func (sv *server) stopped(res debugger.Result, reason string, paused bool) {
	body := dap.StoppedEventBody{AllThreadsStopped: true}
	switch {
	case !res.OK && paused:
		body.Reason, body.Description = "pause", "Paused"
	case !res.OK:
		// The session stays where it was: the client must hear it stopped.
		sv.output("stderr", res.Error)
		body.Reason, body.Description = "pause", res.Error
	default:
		st := res.Stop
		body.ThreadId = int(st.Thread)
		body.Reason = dapReason(st.Reason)
		switch st.Reason {
		case "breakpoint":
			body.HitBreakpointIds = []int{st.Breakpoint}
			for _, id := range sv.funcBps {
				if id == st.Breakpoint {
					body.Reason = "function breakpoint"
				}
			}
		case "watchpoint":
			if st.Watch != nil {
				body.HitBreakpointIds = []int{st.Watch.ID}
				body.Description = fmt.Sprintf("%s: %s → %s", st.Watch.Expr, st.Watch.Old, st.Watch.New)
			}
		case "watchpoint-scope":
			// The watchpoint is gone: its frame returned (or, backwards,
			// was not called yet).
			sv.output("console", res.Text)
			if st.Watch != nil {
				body.Description = fmt.Sprintf("Watchpoint %d (%s) deleted: its frame ended", st.Watch.ID, st.Watch.Expr)
			}
		case "signal":
			body.Text, body.Description = st.Signal, "Signal "+st.Signal
			sv.output("console", res.Text)
			sv.exception = &dap.ExceptionInfoResponseBody{ExceptionId: st.Signal, BreakMode: "always",
				Description: strings.SplitN(res.Text, "\n", 2)[0]}
			sv.exceptionThread = st.Thread
		case "exit":
			// No exited event: clients take it for the end of the session
			// (dap-mode kills the adapter), and this one goes on backwards.
			// The status is told here, and in exited at terminate.
			sv.output("console", res.Text)
			code, _ := processEnd(sv.s)
			body.Description = fmt.Sprintf("End of the recording: the program ended (%s); step back or reverse-continue", exitWord(code))
		case "end":
			sv.output("console", res.Text)
			body.Description = "End of the recording"
		case "start":
			body.Description = "Start of the recording"
		}
		if reason != "" && (st.Reason == "step" || st.Reason == "goto" || st.Reason == "start") {
			body.Reason = reason
		}
	}
	sv.send(&dap.StoppedEvent{Event: event("stopped"), Body: body})
}

// dapReason maps the session's stop reasons to the protocol's.
func dapReason(r string) string {
	switch r {
	case "breakpoint":
		return "breakpoint"
	case "watchpoint", "origin":
		return "data breakpoint"
	case "signal":
		return "exception"
	case "goto":
		return "goto"
	case "start":
		return "entry"
	}
	return "step"
}

// listThreads lists the threads at the current moment.
func (sv *server) listThreads() []dap.Thread {
	out := []dap.Thread{}
	for _, t := range sv.s.ThreadInfos() {
		name := fmt.Sprintf("thread %d", t.Tid)
		if t.Function != "" {
			name += " (" + t.Function + ")"
		}
		out = append(out, dap.Thread{Id: int(t.Tid), Name: name})
	}
	return out
}

// frame returns a stack frame handle's thread and level; 0 is the current
// thread's innermost frame.
func (sv *server) frame(id int) (frameRef, error) {
	if id == 0 {
		return frameRef{}, nil
	}
	if id < 0 || id > len(sv.frames) {
		return frameRef{}, fmt.Errorf("no frame %d at this stop", id)
	}
	return sv.frames[id-1], nil
}

func (sv *server) stackTrace(r *dap.StackTraceRequest) error {
	res := sv.s.ExecuteIn(int32(r.Arguments.ThreadId), 0, "backtrace")
	if !res.OK {
		return fmt.Errorf("stackTrace: %s", res.Error)
	}
	frames, _ := res.Value.([]debugger.FrameInfo)
	total := len(frames)
	start := min(max(r.Arguments.StartFrame, 0), total)
	end := total
	if r.Arguments.Levels > 0 {
		end = min(start+r.Arguments.Levels, total)
	}
	body := dap.StackTraceResponseBody{StackFrames: []dap.StackFrame{}, TotalFrames: total}
	for _, f := range frames[start:end] {
		sv.frames = append(sv.frames, frameRef{thread: int32(r.Arguments.ThreadId), level: f.Level})
		sf := dap.StackFrame{Id: len(sv.frames), Name: f.Function, Line: f.Line, InstructionPointerReference: f.PC}
		if sf.Name == "" {
			sf.Name = f.PC
		}
		if f.File != "" {
			sf.Source = &dap.Source{Name: f.File}
			switch {
			case fileExists(f.FullName):
				sf.Source.Path = f.FullName
			case sv.packedRef(f.FullName) > 0:
				// Not on this machine, but in the recording: the
				// client asks for the lines by reference, and shows
				// where they come from.
				sf.Source.SourceReference = sv.packedRef(f.FullName)
				sf.Source.Origin = "from the recording"
			default:
				sf.Source.PresentationHint = "deemphasize"
			}
			sf.Column = 1
		} else {
			sf.PresentationHint = "subtle"
		}
		body.StackFrames = append(body.StackFrames, sf)
	}
	sv.send(&dap.StackTraceResponse{Response: response(r), Body: body})
	return nil
}

// newVarRef numbers a reference for the client.
func (sv *server) newVarRef(v varRef) int {
	sv.vars = append(sv.vars, v)
	return len(sv.vars)
}

func (sv *server) scopes(r *dap.ScopesRequest) error {
	f, err := sv.frame(r.Arguments.FrameId)
	if err != nil {
		return err
	}
	at := debugger.VarPath{Thread: f.thread, Frame: f.level}
	locals, args := at, at
	locals.Scope, args.Scope = debugger.ScopeLocals, debugger.ScopeArgs
	scopes := []dap.Scope{
		{Name: "Locals", PresentationHint: "locals", VariablesReference: sv.newVarRef(varRef{path: locals})},
		{Name: "Arguments", PresentationHint: "arguments", VariablesReference: sv.newVarRef(varRef{path: args})},
		{Name: "Registers", PresentationHint: "registers", VariablesReference: sv.newVarRef(varRef{path: at, regs: true})},
	}
	sv.send(&dap.ScopesResponse{Response: response(r), Body: dap.ScopesResponseBody{Scopes: scopes}})
	return nil
}

// varRefOf returns what a variablesReference names.
func (sv *server) varRefOf(id int) (varRef, error) {
	if id <= 0 || id > len(sv.vars) {
		return varRef{}, fmt.Errorf("no variables reference %d at this stop", id)
	}
	return sv.vars[id-1], nil
}

func (sv *server) variables(r *dap.VariablesRequest) error {
	ref, err := sv.varRefOf(r.Arguments.VariablesReference)
	if err != nil {
		return err
	}
	out := []dap.Variable{}
	if ref.regs {
		regs, err := sv.s.FrameRegisters(ref.path.Thread, ref.path.Frame)
		if err != nil {
			return err
		}
		for _, reg := range regs {
			v := reg.Value
			if reg.Flags != "" {
				v += " " + reg.Flags
			}
			out = append(out, dap.Variable{Name: reg.Name, Value: v})
		}
	} else {
		nodes, err := sv.s.Expand(ref.path)
		if err != nil {
			return err
		}
		for i, n := range nodes {
			v := dap.Variable{Name: n.Name, Value: n.Value, Type: n.Type}
			if len(n.Children) > 0 {
				child := ref.path
				child.Path = append(append([]int(nil), ref.path.Path...), i)
				v.VariablesReference = sv.newVarRef(varRef{path: child})
			}
			out = append(out, v)
		}
	}
	if r.Arguments.Start > 0 || r.Arguments.Count > 0 {
		start := min(r.Arguments.Start, len(out))
		end := len(out)
		if r.Arguments.Count > 0 {
			end = min(start+r.Arguments.Count, end)
		}
		out = out[start:end]
	}
	sv.send(&dap.VariablesResponse{Response: response(r), Body: dap.VariablesResponseBody{Variables: out}})
	return nil
}

func (sv *server) evaluate(r *dap.EvaluateRequest) error {
	f, err := sv.frame(r.Arguments.FrameId)
	if err != nil {
		return err
	}
	text := strings.TrimSpace(r.Arguments.Expression)
	if r.Arguments.Context == "repl" {
		// The debug console speaks the command language: its text.
		res := sv.s.ExecuteIn(f.thread, f.level, text)
		if !res.OK {
			// A variable typed there, as editors' consoles are used, is
			// evaluated when no command takes it ("i" is info, "x" needs
			// an address).
			if sv.evalExpr(r, f, text) == nil {
				return nil
			}
			return errors.New(res.Error)
		}
		sv.send(&dap.EvaluateResponse{Response: response(r), Body: dap.EvaluateResponseBody{Result: res.Text}})
		if res.Stop != nil {
			// A motion from the console: the editor must show its stop.
			sv.resetHandles()
			sv.threads = sv.listThreads()
			sv.stopped(res, "", false)
		}
		return nil
	}
	return sv.evalExpr(r, f, text)
}

// evalExpr answers r with the value of expression text in frame f.
func (sv *server) evalExpr(r *dap.EvaluateRequest, f frameRef, text string) error {
	n, err := sv.s.Evaluate(f.thread, f.level, text)
	if err != nil {
		return err
	}
	body := dap.EvaluateResponseBody{Result: n.Value, Type: n.Type}
	if len(n.Children) > 0 {
		body.VariablesReference = sv.newVarRef(varRef{path: debugger.VarPath{Thread: f.thread, Frame: f.level, Scope: debugger.ScopeExpr, Expr: text}})
	}
	sv.send(&dap.EvaluateResponse{Response: response(r), Body: body})
	return nil
}

func (sv *server) gotoTargets(r *dap.GotoTargetsRequest) error {
	loc := fmt.Sprintf("%s:%d", sourcePath(r.Arguments.Source), r.Arguments.Line)
	earlier, later, err := sv.s.Arrivals(loc)
	if err != nil {
		return err
	}
	targets := []dap.GotoTarget{}
	for _, a := range []struct {
		what string
		at   *debugger.Arrival
	}{{"previous", earlier}, {"next", later}} {
		if a.at == nil {
			continue
		}
		sv.targets = append(sv.targets, a.at.Moment)
		targets = append(targets, dap.GotoTarget{Id: len(sv.targets), Line: r.Arguments.Line,
			Label: fmt.Sprintf("%s arrival at line %d: %s (thread %d)", a.what, r.Arguments.Line, a.at.Moment, a.at.Thread)})
	}
	sv.send(&dap.GotoTargetsResponse{Response: response(r), Body: dap.GotoTargetsResponseBody{Targets: targets}})
	return nil
}

// sourcePath is the path of a client's source, else its name.
func sourcePath(s dap.Source) string {
	if s.Path != "" {
		return filepath.Clean(s.Path)
	}
	return s.Name
}

// packedRef returns the source reference of a file the recording carries
// (0 when it does not), numbering it on first use.
func (sv *server) packedRef(path string) int {
	for i, p := range sv.sourceRefs {
		if p == path {
			return i + 1
		}
	}
	if sv.notPacked[path] {
		return 0
	}
	if _, err := sv.s.PackedSourceBytes(path); err != nil {
		if sv.notPacked == nil {
			sv.notPacked = map[string]bool{}
		}
		sv.notPacked[path] = true
		return 0
	}
	sv.sourceRefs = append(sv.sourceRefs, path)
	return len(sv.sourceRefs)
}

// source answers a source request: the recording's copy of a file that
// stackTrace gave a reference to.
func (sv *server) source(r *dap.SourceRequest) error {
	ref := r.Arguments.SourceReference
	if r.Arguments.Source != nil && r.Arguments.Source.SourceReference != 0 {
		ref = r.Arguments.Source.SourceReference
	}
	if ref < 1 || ref > len(sv.sourceRefs) {
		return fmt.Errorf("source: no source reference %d", ref)
	}
	data, err := sv.s.PackedSourceBytes(sv.sourceRefs[ref-1])
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	sv.send(&dap.SourceResponse{Response: response(r), Body: dap.SourceResponseBody{Content: string(data)}})
	return nil
}
