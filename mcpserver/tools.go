package mcpserver

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rewind-debugger/rewind/debugger"
)

// Limits of the tools' inputs.
const (
	defaultEventLimit = 200
	maxEventLimit     = 2000
	// eventWindow is how many events before the current moment get_events
	// lists when it is given no range.
	eventWindow   = 100
	defaultMemLen = 64
	maxMemLen     = 4096
)

// CommandInput is the input of run_command.
type CommandInput struct {
	Command string `json:"command" jsonschema:"one command of the debugger's gdb-like language, e.g. continue, reverse-continue, break corrupt.c:16, watch -l b->next, print i, finish, info locals, frame 1"`
}

// GotoInput is the input of goto.
type GotoInput struct {
	Target string `json:"target" jsonschema:"#N (an event number), start, end, or a moment string exactly as a stop or watch_history showed it"`
}

// EventsInput is the input of get_events.
type EventsInput struct {
	From   *int64   `json:"from,omitempty" jsonschema:"first event number (inclusive); without from and to, the window is the 100 events before the current moment and the one it is at"`
	To     *int64   `json:"to,omitempty" jsonschema:"last event number (inclusive); default: the end of the recording when from is given"`
	Types  []string `json:"types,omitempty" jsonschema:"only events of these types"`
	Thread int32    `json:"thread,omitempty" jsonschema:"only events of this thread id"`
	Text   string   `json:"text,omitempty" jsonschema:"only events whose strace-style text contains this (case-insensitive), e.g. a system call name or a path"`
	Limit  int      `json:"limit,omitempty" jsonschema:"at most this many events (the first ones of the window)"`
}

// EventsOutput is the answer of get_events.
type EventsOutput struct {
	Events []debugger.EventInfo `json:"events"`
	// Total counts the events of the window that pass the filter; more than
	// len(events) when the limit cut the list.
	Total     int    `json:"total" jsonschema:"events of the window that pass the filter; more than the events listed when limit cut the list"`
	From      int64  `json:"from" jsonschema:"first event of the window"`
	To        int64  `json:"to" jsonschema:"last event of the window (-1: the end of the recording)"`
	Current   int64  `json:"current" jsonschema:"the event number of the current moment"`
	Truncated bool   `json:"truncated,omitempty" jsonschema:"limit cut the list"`
	Warning   string `json:"warning,omitempty" jsonschema:"the trace is unfinished or damaged and the window reaches the end of its usable events: why, and how many are usable"`
}

// StackInput is the (empty) input of get_stack.
type StackInput struct{}

// StackOutput is the answer of get_stack.
type StackOutput struct {
	Frames   []debugger.FrameInfo `json:"frames" jsonschema:"innermost first: level 0 is where the thread is"`
	Selected int                  `json:"selected" jsonschema:"the selected frame (frame N, up, down), which print and get_locals use"`
	Thread   int32                `json:"thread"`
	Event    int64                `json:"event" jsonschema:"the event number of the current moment"`
	Moment   string               `json:"moment" jsonschema:"the current moment, for goto"`
}

// LocalsInput is the input of get_locals.
type LocalsInput struct {
	Frame *int `json:"frame,omitempty" jsonschema:"frame level as get_stack numbers it (0: innermost); selects that frame like the command frame N; default: the selected frame"`
}

// Variable is a variable with its members or elements (two levels deep).
type Variable struct {
	Name     string     `json:"name"`
	Type     string     `json:"type,omitempty"`
	Value    string     `json:"value"`
	Children []Variable `json:"children,omitempty"`
}

// LocalsOutput is the answer of get_locals.
type LocalsOutput struct {
	Frame    int        `json:"frame" jsonschema:"the frame whose variables these are"`
	Function string     `json:"function,omitempty"`
	File     string     `json:"file,omitempty"`
	Line     int        `json:"line,omitempty"`
	Args     []Variable `json:"args"`
	Locals   []Variable `json:"locals"`
}

// MemoryInput is the input of read_memory.
type MemoryInput struct {
	Address string `json:"address" jsonschema:"where to read: a number (0x7ffe0010), a register ($rsp), a symbol, &var, or a pointer or array expression (b->next, buf) whose target is read"`
	Length  int    `json:"length,omitempty" jsonschema:"bytes to read"`
}

// MemoryOutput is the answer of read_memory.
type MemoryOutput struct {
	Address string `json:"address" jsonschema:"the address read, in hex"`
	Length  int    `json:"length" jsonschema:"bytes read (fewer than asked when the end of a mapping came first)"`
	Hex     string `json:"hex" jsonschema:"the bytes in hex, two digits a byte, in address order"`
	ASCII   string `json:"ascii" jsonschema:"the bytes as text, . for bytes that are not printable ASCII"`
}

// HistoryInput is the input of watch_history.
type HistoryInput struct {
	Expression string `json:"expression" jsonschema:"an lvalue in the selected frame, e.g. b->next, total, a->name[3], *p; or -l EXPR / a raw address as watch accepts"`
}

// Write is one write to the watched location.
type Write struct {
	Index    int    `json:"index"`
	Event    int64  `json:"event" jsonschema:"the event number at the write"`
	Moment   string `json:"moment" jsonschema:"the exact moment of the write, for goto"`
	Thread   int32  `json:"thread"`
	PC       string `json:"pc" jsonschema:"the pc after the writing instruction"`
	Old      string `json:"old"`
	New      string `json:"new"`
	Function string `json:"function,omitempty" jsonschema:"the function of the writing instruction"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Syscall  bool   `json:"syscall,omitempty" jsonschema:"the kernel wrote it during a system call"`
}

// HistoryOutput is the answer of watch_history.
type HistoryOutput struct {
	Expression string  `json:"expression"`
	Writes     []Write `json:"writes" jsonschema:"every write over the whole recording, oldest first"`
}

// OriginInput is the input of origin.
type OriginInput struct {
	Expression string `json:"expression,omitempty" jsonschema:"an lvalue in the selected frame (total, *p, a[i], s->next) or a register ($rax); empty: the location of the previous origin call, one write further along"`
	Direction  string `json:"direction,omitempty" jsonschema:"back (default): the write that produced the value now; forward: the next write; read: the next access that leaves the value unchanged (x86 debug registers cannot trap reads alone)"`
}

// Tool names.
const (
	toolRunCommand   = "run_command"
	toolGetEvents    = "get_events"
	toolGetStack     = "get_stack"
	toolGetLocals    = "get_locals"
	toolReadMemory   = "read_memory"
	toolWatchHistory = "watch_history"
	toolGoto         = "goto"
	toolOrigin       = "origin"
	toolDiffTraces   = "diff_traces"
)

// ToolNames lists the tools the server offers.
var ToolNames = []string{toolRunCommand, toolGetEvents, toolGetStack, toolGetLocals, toolReadMemory, toolWatchHistory, toolGoto, toolOrigin, toolWhy, toolDiffTraces}

// annotations of tools that move in time, and of those that only look.
func annotations(title string, readOnly bool) *mcp.ToolAnnotations {
	no := false
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: readOnly, IdempotentHint: readOnly, DestructiveHint: &no, OpenWorldHint: &no}
}

// addTools registers the tools.
func (sv *server) addTools(srv *mcp.Server) {
	sv.addWhyTool(srv)
	addTool(srv, sv, &mcp.Tool{Name: toolRunCommand, Annotations: annotations("Run a debugger command", false),
		Description: `Runs one debugger command (gdb names and short forms) on the recording and returns its result: ` +
			`ok, error, value/type (print), and for motion commands the stop (reason breakpoint|watchpoint|step|signal|exit|start|end|origin, event, thread, pc, function, file, line, signal, watch old/new, moment). ` +
			`Moves both ways in time: continue, reverse-continue, step, next, finish, reverse-step, reverse-next, reverse-finish, stepi, reverse-stepi. ` +
			`Also break LOC [if COND], watch [-l] EXPR, delete [N], print EXPR, x/FMT ADDR, info locals|args|registers|threads|breakpoints, backtrace, frame N, up, down, thread N, list, when, origin [--forward|--read] [EXPR] (see the origin tool). ` +
			`A failing command gives ok:false with the error; the session goes on.`,
		InputSchema: inputSchema[CommandInput](func(p map[string]*jsonschema.Schema) { p["command"].MinLength = ptr(1) }),
	}, sv.runCommand)

	addTool(srv, sv, &mcp.Tool{Name: toolGetEvents, Annotations: annotations("List recorded events", true),
		Description: `Lists the recorded events (system calls decoded strace-style with results and errno, signals with code and fault address, thread creation and exit, exec, exit) with their event numbers. ` +
			`Without from/to: the 100 events before the current moment and the one it is at, i.e. what the program did just before. Give from: 0 to search the whole recording, and filter by types, thread or text. ` +
			`Event numbers are what goto "#N" accepts.`,
		InputSchema: inputSchema[EventsInput](func(p map[string]*jsonschema.Schema) {
			p["from"].Minimum, p["to"].Minimum = ptr(0.0), ptr(0.0)
			types := make([]any, len(debugger.Types))
			for i, t := range debugger.Types {
				types[i] = t
			}
			p["types"].Items.Enum = types
			p["limit"].Minimum, p["limit"].Maximum = ptr(1.0), ptr(float64(maxEventLimit))
			p["limit"].Default = json.RawMessage(fmt.Sprint(defaultEventLimit))
		}),
	}, sv.getEvents)

	addTool(srv, sv, &mcp.Tool{Name: toolGetStack, Annotations: annotations("Show the call stack", true),
		Description: `Returns the call stack of the current thread at the current moment, innermost frame first: level, pc, function, file, line, inlined, and each function's arguments with their values; and which frame is selected.`,
		InputSchema: inputSchema[StackInput](nil),
	}, sv.getStack)

	addTool(srv, sv, &mcp.Tool{Name: toolGetLocals, Annotations: annotations("Show arguments and local variables", true),
		Description:  `Returns the arguments and local variables of a frame (default: the selected one) with their types and values; structs, arrays and pointed-to data are expanded two levels in children.`,
		InputSchema:  inputSchema[LocalsInput](func(p map[string]*jsonschema.Schema) { p["frame"].Minimum = ptr(0.0) }),
		OutputSchema: localsOutputSchema(),
	}, sv.getLocals)

	addTool(srv, sv, &mcp.Tool{Name: toolReadMemory, Annotations: annotations("Read memory", true),
		Description: `Reads memory of the recorded process at the current moment, as hex and ASCII. The address is an expression: 0x7ffe0010, $rsp, &total, or a pointer such as b->next (reads where it points).`,
		InputSchema: inputSchema[MemoryInput](func(p map[string]*jsonschema.Schema) {
			p["address"].MinLength = ptr(1)
			p["length"].Minimum, p["length"].Maximum = ptr(1.0), ptr(float64(maxMemLen))
			p["length"].Default = json.RawMessage(fmt.Sprint(defaultMemLen))
		}),
	}, sv.readMemory)

	addTool(srv, sv, &mcp.Tool{Name: toolWatchHistory, Annotations: annotations("List every write to a location", true),
		Description: `Lists every write to the memory of an expression over the whole recording, oldest first: event, moment, thread, old and new value, and the function, file and line of the writing instruction (or syscall: true when the kernel wrote it). ` +
			`The fastest way to find who corrupted a variable. The expression is evaluated in the selected frame at the current moment (use run_command "frame N" first for a caller's variable). Pass a write's moment to goto to go there.`,
		InputSchema: inputSchema[HistoryInput](func(p map[string]*jsonschema.Schema) { p["expression"].MinLength = ptr(1) }),
	}, sv.watchHistory)

	addTool(srv, sv, &mcp.Tool{Name: toolGoto, Annotations: annotations("Go to a moment", false),
		Description: `Moves the session to a moment of the recording: "#N" (an event number from get_events or a stop), "start", "end", or a moment string exactly as a stop or watch_history gave it (which returns to that exact instruction). Returns the stop there, as run_command does.`,
		InputSchema: inputSchema[GotoInput](func(p map[string]*jsonschema.Schema) { p["target"].MinLength = ptr(1) }),
	}, sv.gotoMoment)

	addTool(srv, sv, &mcp.Tool{Name: toolOrigin, Annotations: annotations("Go to where a value came from", false),
		Description: `Dataflow in one call: goes back to the instruction that last wrote the value of an expression (or set a register), and returns the stop there (reason "origin", watch.old and watch.new: the value before and after that write, watch.writer: the writing instruction, file/line: the writing line; watch.syscall when the kernel wrote it). ` +
			`Call it again without an expression to follow the same location one write further back. direction forward goes to the next write instead, read to the next read. ` +
			`Faster than watch_history for the last write of a busy variable: it replays only back to the nearest checkpoint with a write.`,
		InputSchema: inputSchema[OriginInput](func(p map[string]*jsonschema.Schema) {
			p["direction"].Enum = []any{"back", "forward", "read"}
			p["direction"].Default = json.RawMessage(`"back"`)
		}),
	}, sv.origin)

	addTool(srv, sv, &mcp.Tool{Name: toolDiffTraces, Annotations: annotations("Compare with another recording", true),
		Description: `Compares this recording (A) with another recording of the same program (B): aligns them per process and thread by their system calls, signals and scheduling, and returns where they first part (first: category, what, and each side's event number, strace-style text, stack and source line) and a summary of what differs after (differences: category time|random|data|result|args|written|signal|only-a|only-b|scheduling|exit|process, call name, count, first event in each). ` +
			`same: true when they do the same things with the same results. Use it to find why a run failed when another passed: goto the first difference's A event to debug it here.`,
		InputSchema: inputSchema[DiffInput](func(p map[string]*jsonschema.Schema) { p["other"].MinLength = ptr(1) }),
	}, sv.diffTraces)
}

func (sv *server) origin(_ context.Context, in OriginInput) (debugger.Result, string, error) {
	cmd := "origin"
	switch in.Direction {
	case "", "back":
	case "forward", "read":
		cmd += " --" + in.Direction
	default:
		return debugger.Result{}, "", fmt.Errorf("direction must be back, forward or read, not %q", in.Direction)
	}
	if e := strings.TrimSpace(in.Expression); e != "" {
		cmd += " " + e
	}
	r := sv.s.Execute(cmd)
	return r, sv.atTraceEnd(r, resultText(r)), nil
}

func ptr[T any](v T) *T { return &v }

// inputSchema infers the schema of an input type and lets edit add what
// tags cannot say (bounds, defaults, enums).
func inputSchema[T any](edit func(props map[string]*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: schema of %T: %v", *new(T), err))
	}
	if edit != nil {
		edit(s.Properties)
	}
	return s
}

// localsOutputSchema describes LocalsOutput: a variable is recursive, which
// inference refuses, so it is a definition referred to.
func localsOutputSchema() *jsonschema.Schema {
	ref := &jsonschema.Schema{Ref: "#/$defs/variable"}
	s, err := jsonschema.For[LocalsOutput](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[Variable](): ref}})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: schema of get_locals: %v", err))
	}
	s.Defs = map[string]*jsonschema.Schema{"variable": {
		Type:        "object",
		Description: "a variable; children are its members, elements or pointed-to value",
		Properties: map[string]*jsonschema.Schema{
			"name":     {Type: "string"},
			"type":     {Type: "string"},
			"value":    {Type: "string"},
			"children": {Type: "array", Items: ref},
		},
		Required:             []string{"name", "value"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}}
	return s
}

// resultText renders a command's result for clients that read text.
func resultText(r debugger.Result) string {
	if !r.OK {
		return "error: " + r.Error
	}
	if r.Text != "" {
		return r.Text
	}
	if r.Value != nil {
		if b, err := json.Marshal(r.Value); err == nil {
			return string(b)
		}
	}
	return "ok"
}

func (sv *server) runCommand(_ context.Context, in CommandInput) (debugger.Result, string, error) {
	if strings.ContainsAny(in.Command, "\n\r") {
		return debugger.Result{}, "", errors.New("one command per call (the command has a line break)")
	}
	r := sv.s.Execute(in.Command)
	if r.Quit {
		// The client owns the server's life: it ends the session by
		// closing the server's input.
		r.Quit, r.Text = false, "quit: the MCP client ends the session (by closing the server); the recording stays open until then"
	}
	return r, sv.atTraceEnd(r, resultText(r)), nil
}

func (sv *server) gotoMoment(_ context.Context, in GotoInput) (debugger.Result, string, error) {
	r := sv.s.Execute("goto " + strings.TrimSpace(in.Target))
	return r, sv.atTraceEnd(r, resultText(r)), nil
}

func (sv *server) getEvents(_ context.Context, in EventsInput) (EventsOutput, string, error) {
	for _, t := range in.Types {
		if !slices.Contains(debugger.Types, t) {
			return EventsOutput{}, "", fmt.Errorf("unknown event type %q (types: %s)", t, strings.Join(debugger.Types, ", "))
		}
	}
	limit, err := bounded("limit", in.Limit, defaultEventLimit, maxEventLimit)
	if err != nil {
		return EventsOutput{}, "", err
	}
	cur := sv.s.Timeline().When()
	var from, to int64
	switch {
	case in.From == nil && in.To == nil:
		from, to = max(0, cur-eventWindow), cur
	case in.From == nil:
		to = *in.To
		from = max(0, to-eventWindow)
	case in.To == nil:
		from, to = *in.From, -1
	default:
		from, to = *in.From, *in.To
	}
	if from < 0 || (to >= 0 && to < from) {
		return EventsOutput{}, "", fmt.Errorf("bad range: from %d to %d", from, to)
	}
	filter := debugger.EventFilter{Types: in.Types, Thread: in.Thread, Text: in.Text}
	out := EventsOutput{Events: []debugger.EventInfo{}, From: from, To: to, Current: cur}
	_, err = debugger.WalkEventRecords(sv.s.Path(), from, to, filter, func(e debugger.EventInfo) {
		out.Total++
		if len(out.Events) < limit {
			out.Events = append(out.Events, e)
		}
	})
	if err != nil {
		return EventsOutput{}, "", fmt.Errorf("reading the events of %s: %w", sv.s.Path(), err)
	}
	out.Truncated = out.Total > len(out.Events)
	var warn string
	if to < 0 || to >= sv.trace.Usable-1 {
		// The window reaches the end of what the trace holds.
		warn = sv.trace.Message
	}
	out.Warning = warn

	var b strings.Builder
	end := "the end"
	if to >= 0 {
		end = fmt.Sprintf("#%d", to)
	}
	fmt.Fprintf(&b, "events #%d to %s (current moment #%d): %d match", from, end, cur, out.Total)
	if out.Truncated {
		fmt.Fprintf(&b, ", the first %d listed", len(out.Events))
	}
	for _, e := range out.Events {
		fmt.Fprintf(&b, "\n#%-7d %7d %10.6f %s", e.Event, e.Thread, e.Time, e.Text)
	}
	if warn != "" {
		b.WriteString("\nwarning: " + warn)
	}
	return out, b.String(), nil
}

func (sv *server) getStack(context.Context, StackInput) (StackOutput, string, error) {
	sn := sv.s.Snapshot()
	out := StackOutput{Frames: sn.Frames, Selected: sn.Selected, Thread: sn.Thread, Event: sn.Event, Moment: sn.Moment}
	if out.Frames == nil {
		out.Frames = []debugger.FrameInfo{}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "thread %d at %s", sn.Thread, sn.Moment)
	if len(sn.Frames) == 0 {
		b.WriteString(": no stack (the thread has no frames to unwind here)")
	}
	for _, f := range sn.Frames {
		mark := "  "
		if f.Level == sn.Selected {
			mark = "=>"
		}
		fmt.Fprintf(&b, "\n%s#%-2d %s %s(%s)", mark, f.Level, f.PC, orUnknown(f.Function), argList(f.Args))
		if f.File != "" {
			fmt.Fprintf(&b, " at %s:%d", f.File, f.Line)
		}
		if f.Inlined {
			b.WriteString(" [inlined]")
		}
	}
	return out, b.String(), nil
}

func orUnknown(s string) string {
	if s == "" {
		return "??"
	}
	return s
}

func argList(args []debugger.VarInfo) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.Name + "=" + a.Value
	}
	return strings.Join(parts, ", ")
}

func (sv *server) getLocals(_ context.Context, in LocalsInput) (LocalsOutput, string, error) {
	if in.Frame != nil {
		if r := sv.s.Execute(fmt.Sprintf("frame %d", *in.Frame)); !r.OK {
			return LocalsOutput{}, "", fmt.Errorf("frame %d: %s", *in.Frame, r.Error)
		}
	}
	sn := sv.s.Snapshot()
	if len(sn.Frames) == 0 {
		return LocalsOutput{}, "", fmt.Errorf("no stack at %s: no frame to read variables from", sn.Moment)
	}
	f := sn.Frames[sn.Selected]
	out := LocalsOutput{Frame: sn.Selected, Function: f.Function, File: f.File, Line: f.Line,
		Args: variables(sn.Args), Locals: variables(sn.Locals)}
	var b strings.Builder
	fmt.Fprintf(&b, "frame #%d %s", sn.Selected, orUnknown(f.Function))
	if f.File != "" {
		fmt.Fprintf(&b, " at %s:%d", f.File, f.Line)
	}
	b.WriteString("\nargs:")
	writeVars(&b, out.Args, 1)
	b.WriteString("\nlocals:")
	writeVars(&b, out.Locals, 1)
	return out, b.String(), nil
}

// variables converts the snapshot's variable trees.
func variables(ns []debugger.VarNode) []Variable {
	out := make([]Variable, 0, len(ns))
	for _, n := range ns {
		v := Variable{Name: n.Name, Type: n.Type, Value: n.Value}
		if len(n.Children) > 0 {
			v.Children = variables(n.Children)
		}
		out = append(out, v)
	}
	return out
}

func writeVars(b *strings.Builder, vs []Variable, depth int) {
	if len(vs) == 0 && depth == 1 {
		b.WriteString(" none")
	}
	for _, v := range vs {
		fmt.Fprintf(b, "\n%s%s", strings.Repeat("  ", depth), v.Name)
		if v.Type != "" {
			fmt.Fprintf(b, " (%s)", v.Type)
		}
		fmt.Fprintf(b, " = %s", v.Value)
		writeVars(b, v.Children, depth+1)
	}
}

// bounded is an optional count of a tool's input: def when it is left
// out (0), an error naming it when it is outside 1..most.
func bounded(name string, v, def, most int) (int, error) {
	switch {
	case v == 0:
		return def, nil
	case v < 0 || v > most:
		return 0, fmt.Errorf("%s %d is out of range (1 to %d)", name, v, most)
	}
	return v, nil
}

func (sv *server) readMemory(_ context.Context, in MemoryInput) (MemoryOutput, string, error) {
	n, err := bounded("length", in.Length, defaultMemLen, maxMemLen)
	if err != nil {
		return MemoryOutput{}, "", err
	}
	expr := strings.TrimSpace(in.Address)
	addr, data, err := sv.s.Memory(expr, n)
	if err != nil {
		return MemoryOutput{}, "", fmt.Errorf("%s: %w", expr, err)
	}
	out := MemoryOutput{Address: fmt.Sprintf("%#x", addr), Length: len(data), Hex: hex.EncodeToString(data), ASCII: printable(data)}
	var b strings.Builder
	fmt.Fprintf(&b, "%d bytes at %#x (%s):", len(data), addr, expr)
	for off := 0; off < len(data); off += 16 {
		line := data[off:min(off+16, len(data))]
		fmt.Fprintf(&b, "\n%016x  %-47s  %s", addr+uint64(off), spacedHex(line), printable(line))
	}
	return out, b.String(), nil
}

// printable shows bytes as ASCII, with . for the others.
func printable(data []byte) string {
	b := make([]byte, len(data))
	for i, c := range data {
		if c < 0x20 || c > 0x7e {
			c = '.'
		}
		b[i] = c
	}
	return string(b)
}

func spacedHex(data []byte) string {
	parts := make([]string, len(data))
	for i, c := range data {
		parts[i] = fmt.Sprintf("%02x", c)
	}
	return strings.Join(parts, " ")
}

func (sv *server) watchHistory(_ context.Context, in HistoryInput) (HistoryOutput, string, error) {
	expr := strings.TrimSpace(in.Expression)
	r := sv.s.Execute("history " + expr)
	if !r.OK {
		return HistoryOutput{}, "", errors.New(r.Error)
	}
	out := HistoryOutput{Expression: expr, Writes: []Write{}}
	items, _ := r.Value.([]debugger.HistoryWrite)
	for _, it := range items {
		out.Writes = append(out.Writes, Write{Index: it.Index, Event: it.Event, Moment: it.Moment, Thread: it.Thread, PC: it.PC,
			Old: it.Old, New: it.New, Function: it.Function, File: it.File, Line: it.Line, Syscall: it.Syscall})
	}
	return out, resultText(r), nil
}
