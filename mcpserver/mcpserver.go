// Package mcpserver serves a debugging session over the Model Context
// Protocol, so that a coding agent can debug a recording: run any command of
// the debugger's language (docs/design.md, §4 "Command language"), list the
// recorded events, read the stack, the variables and memory, and ask for
// every write to a location over the whole recording. `rewind mcp TRACE`
// runs it on stdio.
//
// Every tool answers with structured content (the JSON of its output type,
// described by the tool's output schema) and a text rendering of the same
// answer for clients that only read text.
package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// instructions tell a client's model how the tools fit together.
const instructions = `This server debugs one recorded run of a Linux program (a rewind trace) with time travel: the recording is fixed, so you can go forwards and backwards as often as you like, and every run gives the same values.
Typical session: run_command "continue" to reach the crash (or the end); get_stack and get_locals to see where and with what; watch_history on a corrupted variable to find every write to it; goto a write's moment, or origin EXPR to go straight to the last write before now (again to follow it one write further back).
Given another recording of the same program (a passing run beside a failing one), diff_traces says where the two first part and what differs after.
`

// commandLanguage lists what run_command accepts, from the command table
// itself (usage and short forms): the model sees every command there is.
func commandLanguage() string {
	var b strings.Builder
	b.WriteString("run_command accepts the whole gdb-like command language (help CMD tells more):")
	for i, c := range debugger.Commands().Commands() {
		if i > 0 {
			b.WriteString(";") // usages hold commas (printf "FMT", ARGS…)
		}
		b.WriteString(" " + c.Usage)
		if len(c.Aliases) > 0 {
			b.WriteString(" (" + strings.Join(c.Aliases, "/") + ")")
		}
		if c.Sub != nil {
			var subs []string
			for _, sc := range c.Sub.Commands() {
				subs = append(subs, sc.Name)
			}
			b.WriteString(" with SUBCOMMAND one of " + strings.Join(subs, "|"))
		}
	}
	return b.String() + "."
}

// server is the state behind the tools: one session, used by one call at a
// time.
type server struct {
	s *debugger.Session
	// sem is the session's lock: a one-slot channel, so that a call waiting
	// for another one's end can give up when its client cancels it.
	sem chan struct{}
	// trace says how much of an unfinished or damaged trace is usable;
	// noticed is set once a result has carried its message.
	trace   trace.Status
	noticed bool
}

// New builds the server over a debugger session. All tool calls run one at
// a time: the session is not safe for concurrent use. The server does not
// close the session.
func New(s *debugger.Session, version string) *mcp.Server {
	sv := &server{s: s, sem: make(chan struct{}, 1), trace: s.TraceStatus()}
	inst := instructions + commandLanguage()
	if sv.trace.Message != "" {
		// Clients may not show the instructions to their model: the first
		// result carries the message too (see notice).
		inst += fmt.Sprintf("\nWARNING: this trace is incomplete: %s. Only events #0 to #%d can be replayed: the end of this session is not where the program ended.",
			sv.trace.Message, sv.trace.Usable-1)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "rewind", Title: "rewind time-travel debugger", Version: version},
		&mcp.ServerOptions{Instructions: inst, Capabilities: &mcp.ServerCapabilities{}})
	sv.addTools(srv)
	return srv
}

// Run runs the server on a transport until the client disconnects or ctx is
// cancelled. A disconnection is not an error.
func Run(ctx context.Context, s *debugger.Session, version string, t mcp.Transport) error {
	err := New(s, version).Run(ctx, t)
	if err != nil && ctx.Err() != nil {
		// Cancelled (SIGINT, SIGTERM): a normal end.
		return nil
	}
	if err != nil {
		return fmt.Errorf("mcp server: %w", err)
	}
	return nil
}

// handler is a tool's work on the locked session: the structured answer
// and its text rendering, or an error for the client's model to read.
type handler[In, Out any] func(ctx context.Context, in In) (Out, string, error)

// addTool registers a tool whose calls hold the session's lock, can be
// cancelled and report progress while the engine replays, and whose panics
// become tool errors instead of ending the server.
func addTool[In, Out any](srv *mcp.Server, sv *server, t *mcp.Tool, h handler[In, Out]) {
	mcp.AddTool(srv, t, func(ctx context.Context, req *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, out Out, err error) {
		select {
		case sv.sem <- struct{}{}:
		case <-ctx.Done():
			return nil, out, fmt.Errorf("%s: %w", t.Name, ctx.Err())
		}
		defer func() { <-sv.sem }()
		defer sv.watchProgress(ctx, req)()
		defer func() {
			if p := recover(); p != nil {
				var zero Out
				res, out, err = nil, zero, fmt.Errorf("%s: internal error: %v", t.Name, p)
			}
		}()
		out, text, err := h(ctx, in)
		if err != nil {
			var zero Out
			return nil, zero, fmt.Errorf("%s: %w", t.Name, err)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: sv.notice(text)}}}, out, nil
	})
}

// notice puts the message of an incomplete trace before the first result's
// text, for clients that do not pass the instructions on to their model.
func (sv *server) notice(text string) string {
	if sv.trace.Message == "" || sv.noticed {
		return text
	}
	sv.noticed = true
	return "warning: " + sv.trace.Message + "\n" + text
}

// atTraceEnd adds the message of an incomplete trace to the text of a stop
// at the end of its usable events, where the program seems to end.
func (sv *server) atTraceEnd(r debugger.Result, text string) string {
	if sv.trace.Message != "" && r.Stop != nil && r.Stop.Event >= sv.trace.Usable-1 {
		return text + "\nwarning: " + sv.trace.Message
	}
	return text
}

// progressEvery spaces progress notifications.
const progressEvery = 250 * time.Millisecond

// watchProgress lets the client cancel a long replay (the engine stops at a
// consistent moment) and, when the call carries a progress token, reports
// the events replayed. The returned function uninstalls the hook.
func (sv *server) watchProgress(ctx context.Context, req *mcp.CallToolRequest) func() {
	var token any
	if req != nil && req.Params != nil {
		token = req.Params.GetProgressToken()
	}
	var last time.Time
	sent := int64(-1)
	sv.s.SetProgress(func(done, total int64) bool {
		if token != nil && req.Session != nil && done > sent && time.Since(last) >= progressEvery {
			sent, last = done, time.Now()
			// Best effort: a lost notification does not matter.
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token,
				Message: "replaying the recording", Progress: float64(done), Total: float64(total)})
		}
		return ctx.Err() == nil
	})
	return func() { sv.s.SetProgress(nil) }
}
