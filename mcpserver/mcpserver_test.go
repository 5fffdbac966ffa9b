package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/internal/testprog"
)

func TestMain(m *testing.M) { testprog.Main(m) }

// traceOf gives the recording of corrupt.c, made once per test binary.
func traceOf(t testing.TB) string {
	t.Helper()
	trace, err := corruptTrace()
	if err != nil {
		t.Fatal(err)
	}
	return trace
}

// connect serves a session on trace over in-memory transports and returns
// the SDK's client session on it.
func connect(t testing.TB, trace string) *mcp.ClientSession {
	t.Helper()
	s, err := debugger.Open(trace, debugger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, s, "test", st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		defer s.Close()
		defer cancel()
		// A client that hangs up ends the server without an error.
		cs.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("server: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("the server goes on after its client hung up")
		}
	})
	return cs
}

// call calls a tool and returns its result.
func call(t testing.TB, cs *mcp.ClientSession, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	return res
}

// decode reads a successful tool result's structured content as T, and
// checks that the result also has a text rendering.
func decode[T any](t testing.TB, res *mcp.CallToolResult) T {
	t.Helper()
	var v T
	if res.IsError {
		t.Fatalf("tool error: %s", text(res))
	}
	if text(res) == "" {
		t.Error("no text content")
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return v
}

// text is the text content of a result.
func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// corruptTrace records testdata/source/corrupt.c once: every test opens
// its own session on it.
var corruptTrace = testprog.Once(filepath.Join("..", "testdata", "source", "corrupt.c"))

func TestListTools(t *testing.T) {
	cs := connect(t, traceOf(t))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		byName[tool.Name] = tool
	}
	if len(res.Tools) != len(ToolNames) {
		t.Errorf("%d tools, want %d", len(res.Tools), len(ToolNames))
	}
	for _, name := range ToolNames {
		tool := byName[name]
		if tool == nil {
			t.Errorf("tool %s is missing", name)
			continue
		}
		if len(tool.Description) < 40 {
			t.Errorf("%s: description %q is too short to guide an agent", name, tool.Description)
		}
		in, _ := tool.InputSchema.(map[string]any)
		if in["type"] != "object" {
			t.Errorf("%s: input schema %v is not an object schema", name, tool.InputSchema)
		}
		if out, _ := tool.OutputSchema.(map[string]any); out["type"] != "object" {
			t.Errorf("%s: output schema %v is not an object schema", name, tool.OutputSchema)
		}
	}
	// The required arguments are declared.
	for name, arg := range map[string]string{toolRunCommand: "command", toolReadMemory: "address", toolWatchHistory: "expression", toolGoto: "target"} {
		if tool := byName[name]; tool != nil {
			req, _ := tool.InputSchema.(map[string]any)["required"].([]any)
			if len(req) != 1 || req[0] != arg {
				t.Errorf("%s: required %v, want [%s]", name, req, arg)
			}
		}
	}
}

// TestCrashSession debugs the crash of corrupt.c as an agent would: each
// step depends on where the previous ones left the session.
func TestCrashSession(t *testing.T) {
	cs := connect(t, traceOf(t))

	t.Run("continue reaches the crash", func(t *testing.T) {
		r := decode[debugger.Result](t, call(t, cs, toolRunCommand, CommandInput{Command: "continue"}))
		if !r.OK || r.Stop == nil {
			t.Fatalf("continue: %+v", r)
		}
		st := r.Stop
		if st.Reason != "signal" || st.Signal != "SIGSEGV" || st.Function != "sum" || st.File != "corrupt.c" || st.Line != 24 {
			t.Errorf("stop %+v, want signal SIGSEGV in sum at corrupt.c:24", st)
		}
	})

	t.Run("get_stack", func(t *testing.T) {
		out := decode[StackOutput](t, call(t, cs, toolGetStack, StackInput{}))
		if len(out.Frames) < 2 || out.Frames[0].Function != "sum" || out.Frames[1].Function != "main" {
			t.Fatalf("frames %+v, want sum then main", out.Frames)
		}
		if out.Selected != 0 || out.Frames[0].Line != 24 || len(out.Frames[0].Args) != 1 || out.Frames[0].Args[0].Name != "head" {
			t.Errorf("stack %+v: want frame 0 selected, at line 24, with argument head", out)
		}
	})

	t.Run("get_locals", func(t *testing.T) {
		out := decode[LocalsOutput](t, call(t, cs, toolGetLocals, LocalsInput{}))
		names := map[string]Variable{}
		for _, v := range append(out.Args, out.Locals...) {
			names[v.Name] = v
		}
		for _, n := range []string{"head", "n", "total"} {
			if _, ok := names[n]; !ok {
				t.Errorf("no variable %s in %+v", n, out)
			}
		}
		if v := names["total"]; v.Type != "int" || v.Value == "" {
			t.Errorf("total = %+v, want an int with a value", v)
		}
		if len(names["head"].Children) == 0 {
			t.Errorf("head has no children: %+v", names["head"])
		}
	})

	t.Run("read_memory", func(t *testing.T) {
		total := decode[debugger.Result](t, call(t, cs, toolRunCommand, CommandInput{Command: "print total"}))
		for _, c := range []struct {
			name    string
			in      MemoryInput
			wantErr string // a tool error containing this
			wantLen int
		}{
			{"address of a local", MemoryInput{Address: "&total", Length: 4}, "", 4},
			{"default length", MemoryInput{Address: "&total"}, "", defaultMemLen},
			{"corrupt pointer", MemoryInput{Address: "n"}, "Cannot access memory", 0},
			{"null", MemoryInput{Address: "0x0", Length: 8}, "Cannot access memory", 0},
			{"unknown symbol", MemoryInput{Address: "no_such_var"}, "no_such_var", 0},
			{"too long", MemoryInput{Address: "&total", Length: maxMemLen + 1}, "length", 0},
		} {
			t.Run(c.name, func(t *testing.T) {
				res := call(t, cs, toolReadMemory, c.in)
				if c.wantErr != "" {
					if !res.IsError || !strings.Contains(text(res), c.wantErr) {
						t.Errorf("got %v %q, want a tool error with %q", res.IsError, text(res), c.wantErr)
					}
					return
				}
				out := decode[MemoryOutput](t, res)
				if out.Length != c.wantLen || len(out.Hex) != 2*c.wantLen || len(out.ASCII) != c.wantLen || !strings.HasPrefix(out.Address, "0x7ff") {
					t.Fatalf("read %+v, want %d bytes of the stack", out, c.wantLen)
				}
				// total is a little-endian int.
				var want string
				if v, err := strconv.ParseUint(fmt.Sprint(total.Value), 10, 32); err == nil {
					want = fmt.Sprintf("%02x%02x%02x%02x", v&0xff, v>>8&0xff, v>>16&0xff, v>>24)
				}
				if want == "" || !strings.HasPrefix(out.Hex, want) {
					t.Errorf("hex %s, want it to start with total (%v) = %s", out.Hex, total.Value, want)
				}
			})
		}
	})

	// brk is the number of a brk event of the recording, for goto below:
	// event numbers depend on the machine (the loader's events, whether a
	// cpuid is one), so the test takes one from the recording.
	var brk int64 = -1
	t.Run("get_events", func(t *testing.T) {
		const signalEvent = "SIGSEGV"
		for _, c := range []struct {
			name  string
			in    EventsInput
			check func(t *testing.T, out EventsOutput)
		}{
			{"default window ends at the crash", EventsInput{}, func(t *testing.T, out EventsOutput) {
				if out.To != out.Current || out.From != max(0, out.Current-eventWindow) {
					t.Errorf("window #%d..#%d, want the 100 events before #%d", out.From, out.To, out.Current)
				}
				sig := -1
				for i, e := range out.Events {
					if e.Type == "signal" && e.Signal == signalEvent {
						sig = i
					}
				}
				if sig < 10 || out.Events[sig].Code == "" || out.Events[sig].PC == "" {
					t.Fatalf("no SIGSEGV after its predecessors in %d events: %+v", len(out.Events), out.Events)
				}
				for i := 1; i < len(out.Events); i++ {
					if out.Events[i].Event != out.Events[i-1].Event+1 {
						t.Fatalf("events #%d then #%d: the window has a hole", out.Events[i-1].Event, out.Events[i].Event)
					}
				}
			}},
			{"by type", EventsInput{Types: []string{"signal"}}, func(t *testing.T, out EventsOutput) {
				if len(out.Events) != 1 || out.Events[0].Signal != signalEvent || out.Total != 1 {
					t.Errorf("signals %+v, want the SIGSEGV", out.Events)
				}
			}},
			{"by text over the whole recording", EventsInput{From: ptr(int64(0)), Text: "BRK"}, func(t *testing.T, out EventsOutput) {
				if len(out.Events) == 0 || out.To != -1 {
					t.Fatalf("no brk in the recording (window #%d..#%d)", out.From, out.To)
				}
				for _, e := range out.Events {
					if e.Name != "brk" {
						t.Errorf("event %+v does not match brk", e)
					}
				}
				brk = out.Events[0].Event
			}},
			{"limit", EventsInput{From: ptr(int64(0)), Limit: 5}, func(t *testing.T, out EventsOutput) {
				if len(out.Events) != 5 || !out.Truncated || out.Total <= 5 || out.Events[0].Event != 0 {
					t.Errorf("%d events of %d (truncated %v) from #%d, want the first 5", len(out.Events), out.Total, out.Truncated, out.Events[0].Event)
				}
			}},
			{"range", EventsInput{From: ptr(int64(3)), To: ptr(int64(7))}, func(t *testing.T, out EventsOutput) {
				if len(out.Events) != 5 || out.Events[0].Event != 3 || out.Events[4].Event != 7 {
					t.Errorf("events %+v, want #3 to #7", out.Events)
				}
			}},
		} {
			t.Run(c.name, func(t *testing.T) {
				c.check(t, decode[EventsOutput](t, call(t, cs, toolGetEvents, c.in)))
			})
		}
		for _, c := range []struct {
			name string
			args map[string]any
		}{
			{"unknown type", map[string]any{"types": []string{"bogus"}}},
			{"reversed range", map[string]any{"from": 9, "to": 3}},
			{"limit too large", map[string]any{"limit": maxEventLimit + 1}},
		} {
			t.Run(c.name, func(t *testing.T) {
				if res := call(t, cs, toolGetEvents, c.args); !res.IsError {
					t.Errorf("no tool error: %s", text(res))
				}
			})
		}
	})

	var writes []Write
	t.Run("watch_history in a caller's frame", func(t *testing.T) {
		if r := decode[debugger.Result](t, call(t, cs, toolRunCommand, CommandInput{Command: "frame 1"})); !r.OK {
			t.Fatalf("frame 1: %s", r.Error)
		}
		out := decode[HistoryOutput](t, call(t, cs, toolWatchHistory, HistoryInput{Expression: "b->next"}))
		writes = out.Writes
		var main, overflow int
		for _, w := range out.Writes {
			switch {
			case w.File == "corrupt.c" && w.Line == 34 && w.Function == "main":
				main++
			case w.File == "corrupt.c" && w.Line == 16 && w.Function == "set_name":
				overflow++
			}
			if w.Moment == "" || w.Old == "" || w.New == "" {
				t.Errorf("incomplete write %+v", w)
			}
		}
		if main != 1 || overflow == 0 {
			t.Errorf("writes %+v, want main's at corrupt.c:34 and set_name's at corrupt.c:16", out.Writes)
		}
		if res := call(t, cs, toolWatchHistory, HistoryInput{Expression: "no_such_var"}); !res.IsError {
			t.Errorf("history of an unknown variable: no tool error: %s", text(res))
		}
	})

	t.Run("goto", func(t *testing.T) {
		for _, c := range []struct {
			name   string
			target func() string // "" when an earlier subtest failed
			// wantWhen says whether "when" must then answer the target.
			wantWhen bool
			check    func(t *testing.T, st *debugger.StopInfo)
		}{
			{"a brk event", func() string {
				if brk < 0 {
					return ""
				}
				return fmt.Sprintf("#%d", brk)
			}, true, nil},
			{"start", func() string { return "start" }, false, nil},
			{"the last write", func() string {
				if len(writes) == 0 {
					return ""
				}
				return writes[len(writes)-1].Moment
			}, false, func(t *testing.T, st *debugger.StopInfo) {
				if st.Function != "set_name" || st.File != "corrupt.c" {
					t.Errorf("at the last write: %+v, want set_name in corrupt.c", st)
				}
			}},
		} {
			t.Run(c.name, func(t *testing.T) {
				target := c.target()
				if target == "" {
					t.Fatal("no target: an earlier subtest failed")
				}
				r := decode[debugger.Result](t, call(t, cs, toolGoto, GotoInput{Target: target}))
				if !r.OK || r.Stop == nil {
					t.Fatalf("goto %s: %+v", target, r)
				}
				if c.check != nil {
					c.check(t, r.Stop)
				}
				if c.wantWhen {
					w := decode[debugger.Result](t, call(t, cs, toolRunCommand, CommandInput{Command: "when"}))
					if w.Value != target || w.Event == nil || fmt.Sprintf("#%d", *w.Event) != target {
						t.Errorf("when after goto %s: %+v", target, w)
					}
				}
			})
		}
	})

	t.Run("failing commands are results", func(t *testing.T) {
		for _, c := range []struct{ tool, arg string }{
			{toolRunCommand, "bogus"},
			{toolRunCommand, "print no_such_var"},
			{toolGoto, "#999999999"},
		} {
			args := map[string]any{"command": c.arg}
			if c.tool == toolGoto {
				args = map[string]any{"target": c.arg}
			}
			res := call(t, cs, c.tool, args)
			r := decode[debugger.Result](t, res)
			if r.OK || r.Error == "" || !strings.HasPrefix(text(res), "error: ") {
				t.Errorf("%s %q: %+v (text %q), want ok false with an error", c.tool, c.arg, r, text(res))
			}
		}
		if res := call(t, cs, toolRunCommand, map[string]any{"command": "continue\nreverse-continue"}); !res.IsError {
			t.Errorf("two commands in one call: %s", text(res))
		}
		if res := call(t, cs, toolRunCommand, map[string]any{}); !res.IsError {
			t.Errorf("no command: %s", text(res))
		}
	})
}

// TestConcurrentCalls makes calls at once: they run one at a time on the
// session and all answer.
func TestConcurrentCalls(t *testing.T) {
	cs := connect(t, traceOf(t))
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for i := range 8 {
		wg.Go(func() {
			var res *mcp.CallToolResult
			var err error
			if i%2 == 0 {
				res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: toolGoto, Arguments: GotoInput{Target: fmt.Sprintf("#%d", 20+i)}})
			} else {
				res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: toolGetStack, Arguments: StackInput{}})
			}
			switch {
			case err != nil:
				errs <- err.Error()
			case res.IsError:
				errs <- text(res)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// buildRewind builds the rewind command into a temporary directory.
func buildRewind(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the rewind binary")
	}
	bin := filepath.Join(t.TempDir(), "rewind")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if msg, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/rewind-debugger/rewind").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, msg)
	}
	return bin
}

// TestCommand runs `rewind mcp TRACE` as an agent's client does: the SDK's
// client over the command's stdin and stdout, then a raw exchange whose
// every line of output must be a JSON-RPC message.
func TestCommand(t *testing.T) {
	bin := buildRewind(t)
	trace := traceOf(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	t.Run("sdk client", func(t *testing.T) {
		var stderr strings.Builder
		cmd := exec.Command(bin, "mcp", trace)
		cmd.Stderr = &stderr
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("connect: %v (stderr %q)", err, stderr.String())
		}
		defer cs.Close()
		tools, err := cs.ListTools(ctx, nil)
		if err != nil || len(tools.Tools) != len(ToolNames) {
			t.Fatalf("list tools: %v, %+v", err, tools)
		}
		r := decode[debugger.Result](t, call(t, cs, toolRunCommand, CommandInput{Command: "continue"}))
		if r.Stop == nil || r.Stop.Signal != "SIGSEGV" || r.Stop.Function != "sum" {
			t.Errorf("continue: %+v", r)
		}
	})

	t.Run("raw stdio", func(t *testing.T) {
		cmd := exec.CommandContext(ctx, bin, "mcp", trace)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		stdin, stdout := testprog.StartPiped(t, cmd)
		for _, msg := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`not JSON: answered, and the session goes on`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"goto","arguments":{"target":"end"}}}`,
		} {
			if _, err := io.WriteString(stdin, msg+"\n"); err != nil {
				t.Fatal(err)
			}
		}
		// Read up to the answer of the call, then hang up.
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		answered, parseError := false, false
		for !answered && sc.Scan() {
			var m struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Result  struct {
					StructuredContent debugger.Result `json:"structuredContent"`
				} `json:"result"`
				Error struct{ Code int } `json:"error"`
			}
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.JSONRPC != "2.0" {
				t.Fatalf("stdout line %q is not a JSON-RPC message (%v)", sc.Text(), err)
			}
			parseError = parseError || string(m.ID) == "null" && m.Error.Code == -32700
			if string(m.ID) == "2" {
				answered = true
				if st := m.Result.StructuredContent.Stop; st == nil || st.Reason != "goto" {
					t.Errorf("goto end: %s", sc.Text())
				}
			}
		}
		stdin.Close()
		rest, _ := io.ReadAll(stdout)
		if err := cmd.Wait(); err != nil {
			t.Errorf("rewind mcp: %v (stderr %q)", err, stderr.String())
		}
		if !answered || !parseError || len(strings.TrimSpace(string(rest))) > 0 {
			t.Errorf("answered %v, parse error %v; output after the answer: %q", answered, parseError, rest)
		}
	})

	t.Run("bad trace", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "missing.rwd")
		notTrace := filepath.Join(t.TempDir(), "text.rwd")
		if err := os.WriteFile(notTrace, []byte("not a trace\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{missing, notTrace} {
			var stdout, stderr strings.Builder
			cmd := exec.CommandContext(ctx, bin, "mcp", path)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(""), &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Errorf("%s: %v, want exit status 1", path, err)
			}
			if line := stderr.String(); !strings.HasPrefix(line, "rewind: mcp: ") || strings.Count(line, "\n") != 1 {
				t.Errorf("%s: stderr %q, want one line rewind: mcp: …", path, line)
			}
			if stdout.Len() > 0 {
				t.Errorf("%s: stdout %q, want nothing", path, stdout.String())
			}
		}
	})
}

// TestIncompleteTrace serves a trace whose recording did not finish (its
// footer cut off): the instructions, the first result, a window of events
// that reaches the end and a stop there all say how many events are usable
// and why; a window before the end and later results do not repeat it.
func TestIncompleteTrace(t *testing.T) {
	data, err := os.ReadFile(traceOf(t))
	if err != nil {
		t.Fatal(err)
	}
	frames := testprog.Frames(data)
	if last := frames[len(frames)-1]; last.Type != 4 {
		t.Fatalf("the last frame is of type %d, not the footer", last.Type)
	} else {
		data = data[:last.Off]
	}
	cut := filepath.Join(t.TempDir(), "cut.rwd")
	if err := os.WriteFile(cut, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, cut)
	const notice = "the recording did not finish (the trace has no footer)"
	if inst := cs.InitializeResult().Instructions; !strings.Contains(inst, "WARNING: this trace is incomplete: "+notice) {
		t.Errorf("the instructions do not warn:\n%s", inst)
	}
	stack := call(t, cs, toolGetStack, map[string]any{})
	if !strings.HasPrefix(text(stack), "warning: "+notice) {
		t.Errorf("the first result does not start with the notice: %q", text(stack))
	}
	if again := call(t, cs, toolGetStack, map[string]any{}); strings.Contains(text(again), notice) {
		t.Errorf("the second result repeats the notice: %q", text(again))
	}
	head := decode[EventsOutput](t, call(t, cs, toolGetEvents, map[string]any{"from": 0, "to": 1}))
	if head.Warning != "" {
		t.Errorf("a window at the start warns: %q", head.Warning)
	}
	all := decode[EventsOutput](t, call(t, cs, toolGetEvents, map[string]any{"from": 0}))
	if !strings.HasPrefix(all.Warning, notice) || !strings.Contains(all.Warning, fmt.Sprintf("; %d events usable", all.Total)) {
		t.Errorf("a window to the end: %d events, warning %q", all.Total, all.Warning)
	}
	end := call(t, cs, toolGoto, map[string]any{"target": "end"})
	if !strings.Contains(text(end), "warning: "+notice) {
		t.Errorf("a stop at the end of the usable events does not warn: %q", text(end))
	}
}

// TestOrigin: at the crash, origin on the corrupted pointer of main's b
// goes back to the overflowing copy in set_name, with the value before and
// after; called again without an expression it follows the same location
// one write further back; forward comes back to the later write.
func TestOrigin(t *testing.T) {
	cs := connect(t, traceOf(t))
	for _, c := range []string{"continue", "frame 1"} {
		if r := decode[debugger.Result](t, call(t, cs, toolRunCommand, CommandInput{Command: c})); !r.OK {
			t.Fatalf("%s: %+v", c, r)
		}
	}
	var prev *debugger.StopInfo
	for i, c := range []struct {
		in   OriginInput
		what string
	}{
		{OriginInput{Expression: "b->next"}, "the last write"},
		{OriginInput{}, "one write further back"},
		{OriginInput{Direction: "forward"}, "the next write"},
	} {
		r := decode[debugger.Result](t, call(t, cs, toolOrigin, c.in))
		st := r.Stop
		if !r.OK || st == nil || st.Reason != "origin" || st.Watch == nil {
			t.Fatalf("origin %+v (%s): %+v", c.in, c.what, r)
		}
		if st.Function != "set_name" || st.File != "corrupt.c" || st.Line != 16 || st.Watch.Old == st.Watch.New || st.Watch.Writer == "" {
			t.Errorf("origin %+v (%s): stop %+v %+v, want the copy at corrupt.c:16 with old != new and the writer", c.in, c.what, st, st.Watch)
		}
		switch i {
		case 1:
			if st.Watch.New != prev.Watch.Old {
				t.Errorf("one write further back wrote %s, want the value the last write found (%s)", st.Watch.New, prev.Watch.Old)
			}
		case 2:
			if st.Watch.New != prev.Watch.New || st.Watch.Old != prev.Watch.Old {
				t.Errorf("forward went to %s -> %s, want the last write again (%s -> %s)", st.Watch.Old, st.Watch.New, prev.Watch.Old, prev.Watch.New)
			}
		}
		if i == 0 {
			prev = st
		}
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: toolOrigin, Arguments: OriginInput{Expression: "b->next", Direction: "sideways"}})
	if err == nil && !res.IsError {
		t.Errorf("a bad direction was accepted: %+v", res)
	}
}

// TestInstructionsListCommands: the instructions name every command of the
// language with its short forms, from the command table, so that a model
// that reads them knows all run_command takes.
func TestInstructionsListCommands(t *testing.T) {
	inst := connect(t, traceOf(t)).InitializeResult().Instructions
	for _, want := range []string{
		": break LOC [if COND] (b/br);",
		"; origin [--forward|--read] [EXPR] (o);",
		"; reverse-stepi [N] (rsi);",
		"info SUBCOMMAND (i) with SUBCOMMAND one of ",
		"one of registers|", "|locals|", "|breakpoints|",
	} {
		if !strings.Contains(inst, want) {
			t.Errorf("the instructions lack %q:\n%s", want, inst)
		}
	}
	for _, c := range debugger.Commands().Commands() {
		entry := " " + c.Usage
		if len(c.Aliases) > 0 {
			entry += " (" + strings.Join(c.Aliases, "/") + ")"
		}
		if !strings.Contains(inst, entry) {
			t.Errorf("the instructions lack %q", entry)
		}
	}
}
