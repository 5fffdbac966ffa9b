// Package dap serves recordings over the Debug Adapter Protocol, so that
// VS Code, Neovim (nvim-dap) and other editors debug a recording forwards
// and backwards. It is a thin adapter over a debugger.Session, the session
// the UI, batch mode and MCP drive: every request becomes commands of the
// session's language or one of its small DAP helpers, never engine calls
// of its own.
package dap

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/go-dap"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/internal/frontend"
)

// Error ids of the error responses (the protocol wants a number).
const (
	errMalformed = 1000 + iota
	errUnsupported
	errNoSession
	errRunning
	errRequest
)

// Options configure a server.
type Options struct {
	// Log receives one line per problem the client is not told about in
	// the protocol (a write that failed): standard error in rewind dap.
	Log io.Writer
	// CheckpointBudget bounds the checkpoints' memory (0: the default).
	CheckpointBudget int64
}

// server is one client's connection: at most one recording, opened by
// launch and closed by disconnect or the end of the stream.
type server struct {
	opts   Options
	reader *bufio.Reader
	w      io.Writer
	wmu    sync.Mutex // one message at a time, each with the next seq
	seq    int

	// mu guards the session: requests and the motion in the background
	// take it; running says a motion holds it, and pause asks the motion
	// to stop through the session's progress callback.
	mu      sync.Mutex
	s       *debugger.Session
	cleanup func() // removes a recording made by launch without output
	running atomic.Bool
	pause   atomic.Bool
	motions sync.WaitGroup

	launch launchArgs
	// The client's breakpoints by kind, as the session's ids: DAP
	// requests replace a whole kind (a file's lines, all functions, all
	// data breakpoints) at once.
	sourceBps map[string][]int
	funcBps   []int
	dataBps   []int
	// Handles valid until the next stop: frames, variable references and
	// goto targets are numbered from 1 in these tables.
	frames  []frameRef
	vars    []varRef
	targets []string
	// exception is the signal the last stop was for, in exceptionThread.
	exception       *dap.ExceptionInfoResponseBody
	exceptionThread int32
	// threads are those of the last stop, for a threads request during a
	// motion (the session is busy then).
	threads []dap.Thread
	// sourceRefs are the sources the recording carries (rewind pack)
	// that this machine lacks, by path: the client asks for their
	// contents with a source request. Numbered from 1, for the session.
	sourceRefs []string
	notPacked  map[string]bool // asked, and not in the recording
}

// frameRef is a frame of a thread.
type frameRef struct {
	thread int32
	level  int
}

// varRef is what a variablesReference expands: a value's children, or the
// registers of a frame.
type varRef struct {
	path debugger.VarPath
	regs bool
}

// launchArgs are launch's arguments: a recording, or a program to record
// first.
type launchArgs struct {
	Trace       string   `json:"trace"`
	Program     string   `json:"program"`
	Args        []string `json:"args"`
	Cwd         string   `json:"cwd"`
	Output      string   `json:"output"`
	StopOnEntry bool     `json:"stopOnEntry"`
	Process     int32    `json:"process"`
}

// Serve speaks DAP over r and w until the client disconnects or the stream
// ends. Bad messages get error responses and the server goes on.
func Serve(r io.Reader, w io.Writer, opts Options) error {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	sv := &server{opts: opts, reader: bufio.NewReader(r), w: w, sourceBps: map[string][]int{}}
	defer sv.close()
	for {
		content, err := dap.ReadBaseMessage(sv.reader)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil
			}
			var bpe *dap.BaseProtocolError
			var num *strconv.NumError
			if errors.As(err, &bpe) || errors.As(err, &num) {
				// A bad header: the next line may start a good message.
				sv.sendError(0, "", errMalformed, "malformed message: "+err.Error())
				continue
			}
			return fmt.Errorf("dap: reading a message: %w", err)
		}
		msg, err := dap.DecodeProtocolMessage(content)
		if err != nil {
			seq, command := peek(content)
			var fe *dap.DecodeProtocolMessageFieldError
			if errors.As(err, &fe) && fe.FieldName == "command" {
				sv.sendError(seq, command, errUnsupported, fmt.Sprintf("unsupported request %q", command))
			} else {
				sv.sendError(seq, command, errMalformed, "malformed message: "+err.Error())
			}
			continue
		}
		req, ok := msg.(dap.RequestMessage)
		if !ok {
			continue // responses and events from a client mean nothing here
		}
		if done := sv.handle(req); done {
			return nil
		}
	}
}

// peek reads the seq and command of a message that did not decode, so
// that its error response names the request.
func peek(content []byte) (int, string) {
	var m struct {
		Seq     int    `json:"seq"`
		Command string `json:"command"`
	}
	if json.Unmarshal(content, &m) != nil {
		return 0, ""
	}
	return m.Seq, m.Command
}

// send writes one message with the next sequence number.
func (sv *server) send(m dap.Message) {
	sv.wmu.Lock()
	defer sv.wmu.Unlock()
	sv.seq++
	switch v := m.(type) {
	case dap.ResponseMessage:
		v.GetResponse().Seq, v.GetResponse().Type = sv.seq, "response"
	case dap.EventMessage:
		v.GetEvent().Seq, v.GetEvent().Type = sv.seq, "event"
	}
	if err := dap.WriteProtocolMessage(sv.w, m); err != nil {
		fmt.Fprintf(sv.opts.Log, "rewind: dap: %s\n", err)
	}
}

// response fills the common part of a successful response to req.
func response(req dap.RequestMessage) dap.Response {
	return dap.Response{RequestSeq: req.GetSeq(), Success: true, Command: req.GetRequest().Command}
}

// sendError answers a request with an error the client shows.
func (sv *server) sendError(seq int, command string, id int, msg string) {
	sv.send(&dap.ErrorResponse{
		Response: dap.Response{RequestSeq: seq, Command: command, Message: msg},
		Body:     dap.ErrorResponseBody{Error: &dap.ErrorMessage{Id: id, Format: msg, ShowUser: true}},
	})
}

// event builds the common part of an event.
func event(name string) dap.Event { return dap.Event{Event: name} }

// output sends text to the client's debug console.
func (sv *server) output(category, text string) {
	if text == "" {
		return
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	sv.send(&dap.OutputEvent{Event: event("output"), Body: dap.OutputEventBody{Category: category, Output: text}})
}

// handle answers one request; it returns true after disconnect.
func (sv *server) handle(req dap.RequestMessage) bool {
	fail := func(id int, err error) { sv.sendError(req.GetSeq(), req.GetRequest().Command, id, err.Error()) }
	switch r := req.(type) {
	case *dap.InitializeRequest:
		sv.send(&dap.InitializeResponse{Response: response(req), Body: capabilities()})
		return false
	case *dap.DisconnectRequest, *dap.TerminateRequest:
		sv.stopMotion()
		if _, ok := r.(*dap.TerminateRequest); ok {
			sv.send(&dap.TerminateResponse{Response: response(req)})
			// The motions are over (stopMotion): the session is free.
			if sv.s != nil {
				if code, ended := processEnd(sv.s); ended {
					sv.send(&dap.ExitedEvent{Event: event("exited"), Body: dap.ExitedEventBody{ExitCode: code}})
				}
			}
			sv.send(&dap.TerminatedEvent{Event: event("terminated")})
			return false
		}
		sv.send(&dap.DisconnectResponse{Response: response(req)})
		return true
	case *dap.PauseRequest:
		// The motion stops at its next progress report, at a consistent
		// moment, and says so in its stopped event.
		sv.pause.Store(true)
		sv.send(&dap.PauseResponse{Response: response(req)})
		return false
	case *dap.ThreadsRequest:
		if sv.running.Load() {
			sv.send(&dap.ThreadsResponse{Response: response(req), Body: dap.ThreadsResponseBody{Threads: sv.threadsOrNone()}})
			return false
		}
	case *dap.LaunchRequest:
		if sv.s != nil {
			fail(errRequest, errors.New("a recording is already open: one launch per session"))
			return false
		}
		if err := sv.doLaunch(r); err != nil {
			fail(errRequest, err)
			return false
		}
		sv.send(&dap.LaunchResponse{Response: response(req)})
		sv.send(&dap.InitializedEvent{Event: event("initialized")})
		return false
	}
	if sv.s == nil {
		fail(errNoSession, fmt.Errorf("%s: no recording open: send launch with a trace (or a program) first", req.GetRequest().Command))
		return false
	}
	if sv.running.Load() {
		fail(errRunning, fmt.Errorf("%s: the recording is being replayed: wait for the stop, or pause", req.GetRequest().Command))
		return false
	}
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if err := sv.dispatch(req); err != nil {
		fail(errRequest, err)
	}
	return false
}

// threadsOrNone is the last stop's threads, never nil (the protocol wants
// a list).
func (sv *server) threadsOrNone() []dap.Thread {
	if sv.threads == nil {
		return []dap.Thread{}
	}
	return sv.threads
}

// capabilities are what the adapter supports.
func capabilities() dap.Capabilities {
	return dap.Capabilities{
		SupportsConfigurationDoneRequest: true,
		SupportsFunctionBreakpoints:      true,
		SupportsConditionalBreakpoints:   true,
		SupportsEvaluateForHovers:        true,
		SupportsStepBack:                 true,
		SupportsDataBreakpoints:          true,
		SupportsGotoTargetsRequest:       true,
		SupportsTerminateRequest:         true,
		SupportsExceptionInfoRequest:     true,
	}
}

// doLaunch opens the recording of launch's arguments, recording the
// program first when it names one.
func (sv *server) doLaunch(r *dap.LaunchRequest) error {
	var a launchArgs
	if len(r.Arguments) > 0 {
		if err := json.Unmarshal(r.Arguments, &a); err != nil {
			return fmt.Errorf("launch: bad arguments: %w", err)
		}
	}
	path := a.Trace
	switch {
	case a.Program != "":
		p, cleanup, err := sv.record(a)
		if err != nil {
			return err
		}
		path, sv.cleanup = p, cleanup
	case a.Trace == "":
		return errors.New(`launch needs "trace" (a recording) or "program" (to record first)`)
	}
	s, err := frontend.Open(path, frontend.OpenOptions{
		Options: debugger.Options{Process: a.Process, CheckpointBudget: sv.opts.CheckpointBudget},
		Warn:    func(l string) { sv.output("console", l) },
	})
	if err != nil {
		if sv.cleanup != nil {
			sv.cleanup()
			sv.cleanup = nil
		}
		return fmt.Errorf("launch: %w", err)
	}
	s.SetProgress(func(int64, int64) bool { return !sv.pause.Load() })
	sv.s, sv.launch = s, a
	return nil
}

// close ends the session and removes a recording launch made for itself.
func (sv *server) close() {
	sv.stopMotion()
	if sv.s != nil {
		sv.s.Close()
		sv.s = nil
	}
	if sv.cleanup != nil {
		sv.cleanup()
	}
}

// stopMotion cancels a motion in progress and waits for its end.
func (sv *server) stopMotion() {
	if sv.running.Load() {
		sv.pause.Store(true)
	}
	sv.motions.Wait()
}

// processEnd is the debugged process's status as a shell gives it, and
// whether it ended in the recording at all.
func processEnd(s *debugger.Session) (int, bool) {
	for _, p := range s.ProcessInfos() {
		if p.Pid == s.Process() {
			return p.Code, p.Exit != "-"
		}
	}
	return 0, false
}

// fileExists says whether a frame's source can be opened by the editor.
func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}
