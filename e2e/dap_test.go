package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-dap"
	"github.com/rewind-debugger/rewind/internal/testprog"
)

// dapClient drives `rewind dap` over its stdin and stdout with go-dap.
type dapClient struct {
	t      *testing.T
	in     io.WriteCloser
	out    *bufio.Reader
	seq    int
	events []dap.Message // events read while waiting for a response
	cmd    *exec.Cmd
	stderr bytes.Buffer
}

// startDAP starts `rewind dap` on stdio.
func startDAP(t *testing.T) *dapClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	c := &dapClient{t: t, cmd: exec.CommandContext(ctx, rewind(t), "dap")}
	c.cmd.Stderr = &c.stderr
	in, stdout := testprog.StartPiped(t, c.cmd)
	c.in, c.out = in, bufio.NewReader(stdout)
	t.Cleanup(func() {
		c.in.Close()
		if err := c.cmd.Wait(); err != nil {
			t.Errorf("rewind dap: %v\n%s", err, c.stderr.String())
		}
		checkNoPanic(t, "rewind dap", c.stderr.Bytes())
	})
	return c
}

// raw writes bytes as one message's content.
func (c *dapClient) raw(content string) {
	c.t.Helper()
	if err := dap.WriteBaseMessage(c.in, []byte(content)); err != nil {
		c.t.Fatal(err)
	}
}

// request sends a request and returns its response, keeping the events
// read meanwhile.
func (c *dapClient) request(command string, args any) dap.Message {
	c.t.Helper()
	c.seq++
	m := map[string]any{"seq": c.seq, "type": "request", "command": command}
	if args != nil {
		m["arguments"] = args
	}
	b, _ := json.Marshal(m)
	c.raw(string(b))
	return c.responseTo(c.seq)
}

// responseTo reads messages until the response to request seq.
func (c *dapClient) responseTo(seq int) dap.Message {
	c.t.Helper()
	for {
		m := c.read()
		if r, ok := m.(dap.ResponseMessage); ok && r.GetResponse().RequestSeq == seq {
			return m
		}
		if _, ok := m.(dap.EventMessage); ok {
			c.events = append(c.events, m)
		}
	}
}

// read reads one message.
func (c *dapClient) read() dap.Message {
	c.t.Helper()
	m, err := dap.ReadProtocolMessage(c.out)
	if err != nil {
		c.t.Fatalf("reading from rewind dap: %v\n%s", err, c.stderr.String())
	}
	return m
}

// ok sends a request that must succeed.
func (c *dapClient) ok(command string, args any) dap.Message {
	c.t.Helper()
	m := c.request(command, args)
	if !m.(dap.ResponseMessage).GetResponse().Success {
		c.t.Fatalf("%s failed: %+v", command, m)
	}
	return m
}

// event returns the next event of that name, read or kept.
func (c *dapClient) event(name string) dap.EventMessage {
	c.t.Helper()
	for i, e := range c.events {
		if em := e.(dap.EventMessage); em.GetEvent().Event == name {
			c.events = append(c.events[:i], c.events[i+1:]...)
			return em
		}
	}
	for {
		m := c.read()
		if em, ok := m.(dap.EventMessage); ok {
			if em.GetEvent().Event == name {
				return em
			}
			c.events = append(c.events, m)
		}
	}
}

// stopped waits for the stopped event after a motion and checks where.
func (c *dapClient) stopped(reason string, line int) *dap.StoppedEvent {
	c.t.Helper()
	ev := c.event("stopped").(*dap.StoppedEvent)
	if ev.Body.Reason != reason {
		c.t.Fatalf("stopped because %q (%s), want %q", ev.Body.Reason, ev.Body.Description, reason)
	}
	if got := c.top(ev.Body.ThreadId).Line; line != 0 && got != line {
		c.t.Fatalf("stopped (%s) at line %d, want %d", reason, got, line)
	}
	return ev
}

// top is the innermost frame of a thread.
func (c *dapClient) top(thread int) dap.StackFrame {
	c.t.Helper()
	st := c.ok("stackTrace", map[string]any{"threadId": thread}).(*dap.StackTraceResponse)
	if len(st.Body.StackFrames) == 0 {
		c.t.Fatal("no stack frames")
	}
	return st.Body.StackFrames[0]
}

// vars lists a variables reference as name → value.
func (c *dapClient) vars(ref int) (map[string]string, map[string]int) {
	c.t.Helper()
	r := c.ok("variables", map[string]any{"variablesReference": ref}).(*dap.VariablesResponse)
	vals, refs := map[string]string{}, map[string]int{}
	for _, v := range r.Body.Variables {
		vals[v.Name], refs[v.Name] = v.Value, v.VariablesReference
	}
	return vals, refs
}

// scope returns the variables reference of a frame's scope by name.
func (c *dapClient) scope(frameID int, name string) int {
	c.t.Helper()
	r := c.ok("scopes", map[string]any{"frameId": frameID}).(*dap.ScopesResponse)
	for _, s := range r.Body.Scopes {
		if s.Name == name {
			return s.VariablesReference
		}
	}
	c.t.Fatalf("no scope %q in %+v", name, r.Body.Scopes)
	return 0
}

// batchLocals is `info locals` of rewind's batch mode after cmds.
func batchLocals(t *testing.T, trace string, cmds ...string) map[string]string {
	t.Helper()
	rs := batch(t, trace, append(cmds, "info locals")...)
	out := map[string]string{}
	list, _ := rs[len(rs)-1]["value"].([]any)
	for _, v := range list {
		m := v.(map[string]any)
		out[fmt.Sprint(m["name"])] = fmt.Sprint(m["value"])
	}
	if len(out) == 0 {
		t.Fatalf("batch info locals: nothing in %v", rs[len(rs)-1])
	}
	return out
}

// sameVars checks the DAP locals against batch mode's, by name.
func sameVars(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %s = %q over DAP, %q in batch mode (all: %v)", what, name, got[name], w, got)
		}
	}
}

// TestDAPSession is an editor's session over a recording: breakpoint,
// configurationDone to main, continue to the breakpoint's second hit,
// the stack and the variables as batch mode gives them there, then
// reverseContinue to the first hit, stepBack, and disconnect.
func TestDAPSession(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "source/steps.c", 0)
	before := fileSum(t, trace)
	src := srcPath("source/steps.c")
	c := startDAP(t)

	init := c.ok("initialize", map[string]any{"adapterID": "rewind", "linesStartAt1": true}).(*dap.InitializeResponse)
	if !init.Body.SupportsStepBack || !init.Body.SupportsDataBreakpoints || !init.Body.SupportsGotoTargetsRequest {
		t.Fatalf("capabilities: %+v", init.Body)
	}
	c.ok("launch", map[string]any{"trace": trace})
	c.event("initialized")
	bps := c.ok("setBreakpoints", map[string]any{"source": map[string]any{"path": src}, "breakpoints": []map[string]any{{"line": 21}}}).(*dap.SetBreakpointsResponse)
	if len(bps.Body.Breakpoints) != 1 || !bps.Body.Breakpoints[0].Verified || bps.Body.Breakpoints[0].Line != 21 {
		t.Fatalf("setBreakpoints: %+v", bps.Body.Breakpoints)
	}
	c.ok("configurationDone", nil)
	entry := c.stopped("entry", 18)
	thread := entry.Body.ThreadId
	if th := c.ok("threads", nil).(*dap.ThreadsResponse); len(th.Body.Threads) != 1 || th.Body.Threads[0].Id != thread {
		t.Fatalf("threads: %+v, stopped in %d", th.Body.Threads, thread)
	}

	c.ok("continue", map[string]any{"threadId": thread})
	c.stopped("breakpoint", 21)
	c.ok("continue", map[string]any{"threadId": thread})
	hit := c.stopped("breakpoint", 21)
	if len(hit.Body.HitBreakpointIds) != 1 || hit.Body.HitBreakpointIds[0] != bps.Body.Breakpoints[0].Id {
		t.Errorf("hit breakpoints %v, want %d", hit.Body.HitBreakpointIds, bps.Body.Breakpoints[0].Id)
	}
	frame := c.top(thread)
	if frame.Name != "main" || frame.Source == nil || frame.Source.Path != src {
		t.Fatalf("top frame %+v, want main in %s", frame, src)
	}
	locals, _ := c.vars(c.scope(frame.Id, "Locals"))
	sameVars(t, "second hit", locals, batchLocals(t, trace, "break 21", "continue", "continue"))
	if locals["i"] != "2" {
		t.Errorf("i = %q at the second hit, want 2", locals["i"])
	}
	regs, _ := c.vars(c.scope(frame.Id, "Registers"))
	if regs["rip"] != frame.InstructionPointerReference {
		t.Errorf("rip %q, frame pc %q", regs["rip"], frame.InstructionPointerReference)
	}
	ev := c.ok("evaluate", map[string]any{"expression": "total + sq", "frameId": frame.Id, "context": "watch"}).(*dap.EvaluateResponse)
	if ev.Body.Result != "5" {
		t.Errorf("evaluate total + sq = %q, want 5", ev.Body.Result)
	}

	c.ok("reverseContinue", map[string]any{"threadId": thread})
	c.stopped("breakpoint", 21)
	frame = c.top(thread)
	locals, _ = c.vars(c.scope(frame.Id, "Locals"))
	sameVars(t, "first hit", locals, batchLocals(t, trace, "break 21", "continue"))
	if locals["i"] != "1" {
		t.Errorf("i = %q after reverseContinue, want 1 (the first hit)", locals["i"])
	}

	// stepBack from line 21 of the first iteration: line 20, sq not set.
	c.ok("stepBack", map[string]any{"threadId": thread})
	c.stopped("step", 20)
	c.ok("disconnect", nil)
	if fileSum(t, trace) != before {
		t.Error("the recording changed")
	}
}

// frameNamed returns the frame of a function in a thread's stack.
func (c *dapClient) frameNamed(thread int, name string) dap.StackFrame {
	c.t.Helper()
	st := c.ok("stackTrace", map[string]any{"threadId": thread}).(*dap.StackTraceResponse)
	for _, f := range st.Body.StackFrames {
		if f.Name == name {
			return f
		}
	}
	c.t.Fatalf("no frame of %s in %+v", name, st.Body.StackFrames)
	return dap.StackFrame{}
}

// TestDAPStructures: variables expand through pointers and structs with
// variablesReference, a data breakpoint on a field stops reverseContinue
// at the write that corrupted it, and a goto target returns to a line's
// previous arrival.
func TestDAPStructures(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "source/corrupt.c", 139)
	c := startDAP(t)
	c.ok("initialize", map[string]any{"adapterID": "rewind"})
	c.ok("launch", map[string]any{"trace": trace})
	c.event("initialized")
	c.ok("configurationDone", nil)
	thread := c.stopped("entry", 30).Body.ThreadId
	c.ok("continue", map[string]any{"threadId": thread})
	sig := c.stopped("exception", 24)
	if sig.Body.Text != "SIGSEGV" {
		t.Fatalf("signal %q, want SIGSEGV", sig.Body.Text)
	}
	// Editors ask what the exception was (dap-mode showed "nil" without).
	exc := c.ok("exceptionInfo", map[string]any{"threadId": thread}).(*dap.ExceptionInfoResponse)
	if exc.Body.ExceptionId != "SIGSEGV" || !strings.Contains(exc.Body.Description, "Segmentation fault") {
		t.Errorf("exceptionInfo: %+v", exc.Body)
	}

	// sum's head is a: *head expands to its fields.
	sum := c.frameNamed(thread, "sum")
	args, refs := c.vars(c.scope(sum.Id, "Arguments"))
	if refs["head"] == 0 {
		t.Fatalf("head does not expand: %v", args)
	}
	_, deref := c.vars(refs["head"])
	fields, _ := c.vars(deref["*"])
	if fields["value"] != "1" || !strings.HasPrefix(fields["name"], `"alpha\000`) {
		t.Errorf("*head = %v, want value 1 and name \"alpha\\000...", fields)
	}
	next := c.ok("evaluate", map[string]any{"expression": "head->next", "frameId": sum.Id, "context": "hover"}).(*dap.EvaluateResponse)
	if next.Body.Result != fields["next"] || next.Body.VariablesReference == 0 {
		t.Errorf("hover head->next = %q (ref %d), *head.next = %q", next.Body.Result, next.Body.VariablesReference, fields["next"])
	}

	// main's b: the data breakpoint on b->next finds the overflowing write.
	main := c.frameNamed(thread, "main")
	_, locals := c.vars(c.scope(main.Id, "Locals"))
	_, bref := c.vars(locals["b"])
	info := c.ok("dataBreakpointInfo", map[string]any{"variablesReference": bref["*"], "name": "next"}).(*dap.DataBreakpointInfoResponse)
	id, _ := info.Body.DataId.(string)
	if id == "" {
		t.Fatalf("b->next cannot be watched: %s", info.Body.Description)
	}
	set := c.ok("setDataBreakpoints", map[string]any{"breakpoints": []map[string]any{{"dataId": id, "accessType": "write"}}}).(*dap.SetDataBreakpointsResponse)
	if len(set.Body.Breakpoints) != 1 || !set.Body.Breakpoints[0].Verified {
		t.Fatalf("setDataBreakpoints: %+v", set.Body.Breakpoints)
	}
	c.ok("reverseContinue", map[string]any{"threadId": thread})
	c.stopped("data breakpoint", 0)
	if msg := c.errorOf(c.request("exceptionInfo", map[string]any{"threadId": thread})); !strings.Contains(msg, "did not stop for a signal") {
		t.Errorf("exceptionInfo at a data breakpoint: %q", msg)
	}
	if top := c.top(thread); top.Name != "set_name" {
		t.Fatalf("the write to b->next stopped in %s:%d, want set_name", top.Name, top.Line)
	}
	nargs, _ := c.vars(c.scope(c.top(thread).Id, "Arguments"))
	if want := `"bravo-overflowing"`; !strings.Contains(nargs["src"], want) {
		t.Errorf("set_name's src = %q, want %s", nargs["src"], want)
	}
	c.ok("setDataBreakpoints", map[string]any{"breakpoints": []any{}})

	// Line 35 ran before: its previous arrival is a goto target.
	src := map[string]any{"path": srcPath("source/corrupt.c")}
	targets := c.ok("gotoTargets", map[string]any{"source": src, "line": 35}).(*dap.GotoTargetsResponse)
	if len(targets.Body.Targets) != 1 {
		t.Fatalf("goto targets of line 35 (run once, before): %+v", targets.Body.Targets)
	}
	c.ok("goto", map[string]any{"threadId": thread, "targetId": targets.Body.Targets[0].Id})
	c.stopped("goto", 35)
	_, locals = c.vars(c.scope(c.top(thread).Id, "Locals"))
	_, aref := c.vars(locals["a"])
	afields, _ := c.vars(aref["*"])
	if afields["value"] != "0" {
		t.Errorf("a->value = %q before line 35 ran, want 0", afields["value"])
	}
	c.ok("disconnect", nil)
}

// errorOf returns the message of an error response, failing on success.
func (c *dapClient) errorOf(m dap.Message) string {
	c.t.Helper()
	r := m.(dap.ResponseMessage).GetResponse()
	if r.Success {
		c.t.Fatalf("%s succeeded, want an error: %+v", r.Command, m)
	}
	return r.Message
}

// TestDAPBadInput: malformed messages, unknown requests, requests before
// launch and bad launches get error responses, and the server goes on to
// serve a good session after them.
func TestDAPBadInput(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "source/steps.c", 0)
	before := fileSum(t, trace)
	c := startDAP(t)

	c.raw(`{"seq": 1, "type": "request", "command": "initialize", `) // cut short
	if msg := c.errorOf(c.read()); !strings.Contains(msg, "malformed") {
		t.Errorf("malformed JSON: %q", msg)
	}
	for _, tc := range []struct {
		command string
		args    any
		want    string
	}{
		{"frobnicate", nil, "unsupported request"},
		{"stackTrace", map[string]any{"threadId": 1}, "send launch"},
		{"continue", map[string]any{"threadId": 1}, "send launch"},
		{"launch", map[string]any{}, "trace"},
		{"launch", map[string]any{"trace": filepath.Join(t.TempDir(), "missing.rwd")}, "missing.rwd"},
		{"launch", map[string]any{"trace": 42}, "bad arguments"},
		{"launch", map[string]any{"program": filepath.Join(t.TempDir(), "no-such-program")}, "no-such-program"},
	} {
		if msg := c.errorOf(c.request(tc.command, tc.args)); !strings.Contains(msg, tc.want) {
			t.Errorf("%s %v: error %q, want it to say %q", tc.command, tc.args, msg, tc.want)
		}
	}

	c.ok("initialize", map[string]any{"adapterID": "rewind"})
	c.ok("launch", map[string]any{"trace": trace, "stopOnEntry": true})
	c.event("initialized")
	for _, tc := range []struct {
		command string
		args    any
		want    string
	}{
		{"launch", map[string]any{"trace": trace}, "already open"},
		{"variables", map[string]any{"variablesReference": 99}, "no variables reference"},
		{"goto", map[string]any{"threadId": 1, "targetId": 7}, "no target"},
		{"evaluate", map[string]any{"expression": "bogus", "context": "repl"}, "unknown command"},
	} {
		if msg := c.errorOf(c.request(tc.command, tc.args)); !strings.Contains(msg, tc.want) {
			t.Errorf("%s %v: error %q, want it to say %q", tc.command, tc.args, msg, tc.want)
		}
	}
	bps := c.ok("setBreakpoints", map[string]any{"source": map[string]any{"path": srcPath("source/steps.c")},
		"breakpoints": []map[string]any{{"line": 6, "condition": "x == 3"}, {"line": 100000}}}).(*dap.SetBreakpointsResponse)
	if len(bps.Body.Breakpoints) != 2 || !bps.Body.Breakpoints[0].Verified || bps.Body.Breakpoints[1].Verified || bps.Body.Breakpoints[1].Message == "" {
		t.Fatalf("a good and a bad line: %+v", bps.Body.Breakpoints)
	}
	c.ok("configurationDone", nil)
	thread := c.stopped("entry", 0).Body.ThreadId
	c.ok("continue", map[string]any{"threadId": thread})
	c.stopped("breakpoint", 6)
	args, _ := c.vars(c.scope(c.top(thread).Id, "Arguments"))
	if args["x"] != "3" {
		t.Errorf("conditional breakpoint x == 3 stopped with x = %q", args["x"])
	}
	// A variable typed in the debug console is its value, also one named
	// like a command that cannot take it (x examines memory).
	if x := c.ok("evaluate", map[string]any{"expression": "x", "context": "repl"}).(*dap.EvaluateResponse); x.Body.Result != "3" {
		t.Errorf("repl x: %q, want 3", x.Body.Result)
	}
	// The debug console runs rewind's commands; a motion there is a stop.
	when := c.ok("evaluate", map[string]any{"expression": "when", "context": "repl"}).(*dap.EvaluateResponse)
	if !strings.HasPrefix(when.Body.Result, "#") {
		t.Errorf("repl when: %q", when.Body.Result)
	}
	c.ok("evaluate", map[string]any{"expression": "finish", "context": "repl"})
	c.stopped("step", 20)
	c.ok("disconnect", nil)
	if fileSum(t, trace) != before {
		t.Error("the recording changed")
	}
}

// TestDAPLaunchProgram: launch with a program records it first (its
// output reaches the console) and debugs the recording, served on a TCP
// address with --listen.
func TestDAPLaunchProgram(t *testing.T) {
	t.Parallel()
	prog := buildC(t, "source/steps.c")
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	addr := listenDAP(ctx, t)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := &dapClient{t: t, in: conn, out: bufio.NewReader(conn)}
	c.ok("initialize", map[string]any{"adapterID": "rewind"})
	c.ok("launch", map[string]any{"program": prog, "cwd": dir, "output": "steps.rwd"})
	c.event("initialized")
	printed := false
	for _, e := range c.events {
		if out, ok := e.(*dap.OutputEvent); ok && out.Body.Category == "stdout" && out.Body.Output == "total 14\n" {
			printed = true
		}
	}
	if !printed {
		t.Errorf("the program's output is not in the console: %+v", c.events)
	}
	if _, err := os.Stat(filepath.Join(dir, "steps.rwd")); err != nil {
		t.Fatalf("the recording is not kept at output: %v", err)
	}
	c.ok("setFunctionBreakpoints", map[string]any{"breakpoints": []map[string]any{{"name": "add"}}})
	c.ok("configurationDone", nil)
	thread := c.stopped("entry", 18).Body.ThreadId
	c.ok("continue", map[string]any{"threadId": thread})
	c.stopped("function breakpoint", 12)
	c.ok("stepOut", map[string]any{"threadId": thread})
	c.stopped("step", 21)
	c.ok("disconnect", nil)
}

// TestDAPExitCode continues to the end of a program that returns 3: the
// stop says 3, with no exited event (clients such as Emacs's dap-mode end
// the session there, and this one goes on backwards); terminate sends
// exited with 3.
func TestDAPExitCode(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "exit3.c", 3)
	c := startDAP(t)
	c.ok("initialize", map[string]any{"adapterID": "rewind", "linesStartAt1": true})
	c.ok("launch", map[string]any{"trace": trace})
	c.event("initialized")
	c.ok("configurationDone", nil)
	entry := c.event("stopped").(*dap.StoppedEvent)
	c.ok("continue", map[string]any{"threadId": entry.Body.ThreadId})
	end := c.event("stopped").(*dap.StoppedEvent)
	if !strings.Contains(end.Body.Description, "exit status 3") {
		t.Errorf("the stop at the end says %q, want exit status 3", end.Body.Description)
	}
	c.ok("reverseContinue", map[string]any{"threadId": entry.Body.ThreadId})
	c.stopped("entry", 0)
	for _, e := range c.events {
		if _, ok := e.(*dap.ExitedEvent); ok {
			t.Errorf("an exited event while the session goes on: %+v", e)
		}
	}
	c.ok("terminate", nil)
	if ex := c.event("exited").(*dap.ExitedEvent); ex.Body.ExitCode != 3 {
		t.Errorf("exited with %d, want 3", ex.Body.ExitCode)
	}
	c.event("terminated")
	c.ok("disconnect", nil)
}
