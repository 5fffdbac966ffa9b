package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rewind-debugger/rewind/debugger"
)

// replyTimeout bounds the wait for one line of the server: long enough for
// a replay on a loaded machine, short enough to report a dead server.
const replyTimeout = time.Minute

// rawSession is `rewind mcp` on a recording, spoken to line by line: the
// server runs on Transport over pipes, as internal/cli/mcp.go runs it on stdio.
type rawSession struct {
	in     io.WriteCloser
	lines  chan []byte // the server's output, one message a line
	done   chan error  // Run's result
	cancel context.CancelFunc
	s      *debugger.Session
	probes int
}

// startRaw serves a session on trace through Transport (lines bounded by
// maxLine, 0 for the default) and initializes it as a client does.
func startRaw(trace string, maxLine int) (*rawSession, error) {
	s, err := debugger.Open(trace, debugger.Options{})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	rs := &rawSession{in: inW, lines: make(chan []byte, 64), done: make(chan error, 1), cancel: cancel, s: s}
	go func() { rs.done <- Run(ctx, s, "test", &Transport{Reader: inR, Writer: outW, MaxLineLength: maxLine}) }()
	go func() {
		defer close(rs.lines)
		br := bufio.NewReader(outR)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				rs.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	rs.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	r, err := rs.recv()
	if err == nil && (string(r.ID) != `"init"` || r.Error != nil) {
		err = fmt.Errorf("initialize: %+v", r)
	}
	if err != nil {
		rs.close()
		return nil, err
	}
	rs.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return rs, nil
}

// newRaw is startRaw for a test, closed at its end.
func newRaw(t testing.TB, maxLine int) *rawSession {
	t.Helper()
	rs, err := startRaw(traceOf(t), maxLine)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rs.close(); err != nil {
			t.Error(err)
		}
	})
	return rs
}

// send writes line and its newline.
func (rs *rawSession) send(line string) {
	// A write fails only once the server is gone, which recv reports.
	_, _ = io.WriteString(rs.in, line+"\n")
}

// recv reads the server's next message, checked to be well-formed.
func (rs *rawSession) recv() (reply, error) {
	select {
	case line, ok := <-rs.lines:
		if !ok {
			err := errors.New("the server closed its output")
			select {
			case runErr := <-rs.done:
				err = fmt.Errorf("the server ended (Run: %v)", runErr)
				rs.done <- runErr
			default:
			}
			return reply{}, err
		}
		return parseReply(line)
	case <-time.After(replyTimeout):
		return reply{}, errors.New("no message from the server")
	}
}

// probe sends a valid tool call and returns its id.
func (rs *rawSession) probe() string {
	rs.probes++
	id := fmt.Sprintf(`"probe-%d"`, rs.probes)
	rs.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"when"}}}`)
	return id
}

// checkProbe reads the answer to probe id: a successful tool result.
func checkProbe(r reply, id string) error {
	var res struct {
		IsError           bool            `json:"isError"`
		StructuredContent debugger.Result `json:"structuredContent"`
	}
	switch {
	case string(r.ID) != id:
		return fmt.Errorf("%s: want the answer to the valid call %s", r.Line, id)
	case r.Error != nil:
		return fmt.Errorf("valid call %s answered with an error: %s", id, r.Line)
	case json.Unmarshal(r.Result, &res) != nil || res.IsError || !res.StructuredContent.OK:
		return fmt.Errorf("valid call %s failed: %s", id, r.Line)
	}
	return nil
}

// close hangs up: the server must end without an error.
func (rs *rawSession) close() error {
	defer rs.s.Close()
	defer rs.cancel()
	rs.in.Close()
	go func() {
		for range rs.lines {
		}
	}()
	select {
	case err := <-rs.done:
		return err
	case <-time.After(replyTimeout):
		return errors.New("the server goes on after its client hung up")
	}
}

// reply is one message of the server.
type reply struct {
	Line   []byte
	ID     json.RawMessage // nil for a notification
	Method string          // set for a notification or a request
	Result json.RawMessage
	Error  *jsonrpcError
}

type jsonrpcError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

// parseReply checks that a line of the server is one JSON-RPC 2.0 message:
// a response (an id, and a result or an error with an integer code and a
// message) or a request or notification of the server.
func parseReply(line []byte) (reply, error) {
	r := reply{Line: bytes.TrimSuffix(line, []byte("\n"))}
	bad := func(why string) (reply, error) { return reply{}, fmt.Errorf("server line %q: %s", r.Line, why) }
	var m map[string]json.RawMessage
	if !bytes.HasSuffix(line, []byte("\n")) || bytes.Count(line, []byte("\n")) != 1 {
		return bad("not one line")
	}
	if err := json.Unmarshal(r.Line, &m); err != nil {
		return bad(err.Error())
	}
	if string(m["jsonrpc"]) != `"2.0"` {
		return bad(`no "jsonrpc":"2.0"`)
	}
	if meth, ok := m["method"]; ok {
		if json.Unmarshal(meth, &r.Method) != nil {
			return bad("method is not a string")
		}
		r.ID = m["id"]
		return r, nil
	}
	r.ID, r.Result = m["id"], m["result"]
	if r.ID == nil {
		return bad("a response without an id")
	}
	if e, ok := m["error"]; ok {
		if r.Result != nil {
			return bad("both a result and an error")
		}
		var fields map[string]json.RawMessage
		if json.Unmarshal(e, &fields) != nil || json.Unmarshal(e, &r.Error) != nil ||
			fields["code"] == nil || fields["message"] == nil || r.Error.Message == "" {
			return bad("the error is not an object with an integer code and a message")
		}
	} else if r.Result == nil {
		return bad("a response without a result or an error")
	}
	return r, nil
}

// badLines are lines a client may send by mistake, and the error each one
// gets: code 0 means no error, then id is the id of a result expected
// instead ("" for no answer at all). The lines are also the fuzzer's seeds.
var badLines = []struct {
	name, line string
	code       int64
	id         string
}{
	{"not JSON", `x`, -32700, "null"},
	{"cut object", `{"jsonrpc":"2.0","id":3,"method":`, -32700, "null"},
	{"two values", `{"jsonrpc":"2.0","id":3,"method":"ping"} {}`, -32700, "null"},
	{"trailing garbage", `{"jsonrpc":"2.0","id":3,"method":"ping"}x`, -32700, "null"},
	{"single quotes", `{'jsonrpc':'2.0'}`, -32700, "null"},
	{"control character in a string", "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"p\x01\"}", -32700, "null"},
	{"nesting past JSON's limit", strings.Repeat("[", 20000), -32700, "null"},
	{"unicode space around", "\u00a0{}", -32700, "null"},
	{"number", `42`, -32600, "null"},
	{"huge number", `1e999999`, -32600, "null"},
	{"string", `"ping"`, -32600, "null"},
	{"null", `null`, -32600, "null"},
	{"empty object", `{}`, -32600, "null"},
	{"batch", `[{"jsonrpc":"2.0","id":4,"method":"ping"}]`, -32600, "null"},
	{"empty batch", `[]`, -32600, "null"},
	{"wrong version", `{"jsonrpc":"1.0","id":5,"method":"ping"}`, -32600, "5"},
	{"no version", `{"id":"five","method":"ping"}`, -32600, `"five"`},
	{"numeric version", `{"jsonrpc":2.0,"id":6,"method":"ping"}`, -32600, "6"},
	{"version key in capitals", `{"JSONRPC":"2.0","id":6,"method":"ping"}`, -32600, "6"},
	{"numeric method", `{"jsonrpc":"2.0","id":7,"method":7}`, -32600, "7"},
	{"no method", `{"jsonrpc":"2.0","id":8}`, -32600, "8"},
	{"boolean id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, -32600, "null"},
	{"object id", `{"jsonrpc":"2.0","id":{"n":9},"method":"ping"}`, -32600, "null"},
	{"fractional id", `{"jsonrpc":"2.0","id":9.5,"method":"ping"}`, -32600, "9.5"},
	{"id past 2^53", `{"jsonrpc":"2.0","id":18014398509481985,"method":"ping"}`, -32600, "18014398509481985"},
	{"id out of float range", `{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, -32600, "1e400"},
	{"scalar params", `{"jsonrpc":"2.0","id":10,"method":"tools/list","params":10}`, -32600, "10"},
	{"scalar params of a notification", `{"jsonrpc":"2.0","method":"notifications/initialized","params":"x"}`, -32600, "null"},
	{"nesting past the SDK's limit", `{"jsonrpc":"2.0","id":11,"method":"ping","params":{"a":` + strings.Repeat("[", 1500) + strings.Repeat("]", 1500) + `}}`, -32600, "11"},
	{"line too long", `{"jsonrpc":"2.0","id":12,"method":"ping","params":{"pad":"` + strings.Repeat("x", 2*testMaxLine) + `"}}`, -32600, "null"},
	{"odd unicode", "{\"jsonrpc\":\"2.0\",\"id\":\"\u202e\U0001F600\\ud800\",\"method\":\"\\u0000\"}", -32601, "\"\u202e\U0001F600\\ud800\""},
	{"response to nothing", `{"jsonrpc":"2.0","id":13,"result":{}}`, 0, ""},
	{"error response to nothing", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`, 0, ""},
	{"bad response", `{"jsonrpc":"2.0","id":14,"result":{},"error":{"code":1,"message":"m"}}`, 0, ""},
	{"blank", " \t\r", 0, ""},
	{"valid with CRLF", "{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"ping\"}\r", 0, "15"},
	{"unknown method", `{"jsonrpc":"2.0","id":16,"method":"no/such/method"}`, -32601, "16"},
	{"unknown tool", `{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"no_such_tool"}}`, -32602, "17"},
}

// testMaxLine is the line bound of the sessions of these tests: small, so
// that a line over it is cheap.
const testMaxLine = 32 << 10

// TestBadLines sends each bad line followed by a valid tool call: the line
// gets its one error (or its answer), the call its result, on the same
// session.
func TestBadLines(t *testing.T) {
	rs := newRaw(t, testMaxLine)
	for _, c := range badLines {
		t.Run(c.name, func(t *testing.T) {
			want := expectation{answer: c.id != "", id: json.RawMessage(c.id), code: c.code, result: c.code == 0}
			// The table and FuzzServerLines's oracle agree.
			if o := expect(c.line); o.answer != want.answer || o.answer && (!sameID(o.id, want.id) || o.code != 0 && o.code != want.code) {
				t.Errorf("the oracle expects %s", o)
			}
			problems, err := rs.exchange(c.line, want)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range problems {
				t.Error(p)
			}
		})
	}
}

// TestLineFilter checks what the filter hands the SDK and what it
// answers itself, on whole streams: the last line may lack its newline.
func TestLineFilter(t *testing.T) {
	const ping = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, c := range []struct {
		name, in, forwarded string
		codes               []int64 // the errors answered, in order
	}{
		{"valid lines", ping + "\n" + ping + "\n", ping + "\n" + ping + "\n", nil},
		{"unterminated last line", ping + "\n" + ping, ping + "\n" + ping + "\n", nil},
		{"whitespace and CRLF", " \t\r\n\n\t" + ping + " \r\n", ping + "\n", nil},
		{"bad lines between", "x\n" + ping + "\n[]\n" + ping + "\n{", ping + "\n" + ping + "\n", []int64{-32700, -32600, -32700}},
		{"line too long", `{"x":"` + strings.Repeat("y", 100) + "\"}\n" + ping + "\n", ping + "\n", []int64{-32600}},
		{"line as long as allowed", " " + ping + strings.Repeat(" ", 64-len(ping)-2) + "\r\n", ping + "\n", nil},
		{"bad response", `{"jsonrpc":"2.0","id":2}` + "\n" + `{"jsonrpc":"2.0","id":2,"result":1,"error":{}}`, "", []int64{-32600}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			f := &lineFilter{in: bufio.NewReaderSize(strings.NewReader(c.in), 16), closer: io.NopCloser(nil),
				out: &lineWriter{w: nopWriteCloser{&out}}, limit: 64}
			got, err := io.ReadAll(f)
			if err != nil || string(got) != c.forwarded {
				t.Errorf("forwarded %q (%v), want %q", got, err, c.forwarded)
			}
			var codes []int64
			for _, line := range bytes.SplitAfter(out.Bytes(), []byte("\n")) {
				if len(line) == 0 {
					continue
				}
				r, err := parseReply(line)
				if err != nil || r.Error == nil || string(r.ID) == "" {
					t.Errorf("answer %q: %+v, %v", line, r, err)
					continue
				}
				codes = append(codes, r.Error.Code)
			}
			if fmt.Sprint(codes) != fmt.Sprint(c.codes) {
				t.Errorf("answered errors %v, want %v", codes, c.codes)
			}
		})
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// sameID says whether two ids are the same string or number (the SDK
// answers 1.0 with 1).
func sameID(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return x == y
}

// fuzzServer is the session the iterations of FuzzServerLines share in one
// process: a new one each time would cost a replay.
var fuzzServer = sync.OnceValues(func() (*rawSession, error) {
	trace, err := corruptTrace()
	if err != nil {
		return nil, err
	}
	return startRaw(trace, testMaxLine)
})

// FuzzServerLines sends arbitrary lines to one session, each followed by a
// valid tool call: the server never ends, answers a bad line with exactly
// one well-formed JSON-RPC error (what JSON-RPC 2.0 expects, see expect),
// and then answers the call.
func FuzzServerLines(f *testing.F) {
	for _, c := range badLines {
		f.Add(c.line)
	}
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_stack","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":-9007199254740992,"method":"ping","params":null}`,
		`{"jsonrpc":"2.0","id":1e2,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":"\ud83d\ude00","method":"ping","jsonrpc":"1.0"}`,
		`{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`,
		strings.Repeat(`{"a":`, 999) + "1" + strings.Repeat("}", 999),
		"\xff\xfe{\"jsonrpc\":\"2.0\"}",
		`{"jsonrpc":"2.0","id":"\xff","method":"ping"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		line = strings.ReplaceAll(line, "\n", "")
		rs, err := fuzzServer()
		if err != nil {
			t.Fatal(err)
		}
		want := expect(line)
		problems, err := rs.exchange(line, want)
		if err != nil {
			t.Fatalf("after %q (want %s): %v", line, want, err)
		}
		if problems != nil {
			t.Fatalf("%q (want %s): %s", line, want, strings.Join(problems, "; "))
		}
	})
}

// exchange sends line and then a valid tool call (the probe), and reads up
// to the probe's answer and the answer want expects to the line, in
// either order: tool calls run concurrently. It goes on after a problem,
// so that the next exchange finds the session in step, and returns the
// problems; err is the end of the server.
func (rs *rawSession) exchange(line string, want expectation) (problems []string, err error) {
	rs.send(line)
	probe := rs.probe()
	answered, probed := false, false
	for !probed || want.answer && !answered {
		r, err := rs.recv()
		if err != nil {
			return problems, err
		}
		if r.Method != "" {
			continue // the server's own notifications
		}
		if string(r.ID) == probe && !probed {
			if err := checkProbe(r, probe); err != nil {
				problems = append(problems, err.Error())
			}
			probed = true
			continue
		}
		switch {
		case !want.answer || answered:
			problems = append(problems, "unexpected answer "+string(r.Line))
		case !sameID(r.ID, want.id) || want.code != 0 && (r.Error == nil || r.Error.Code != want.code) ||
			want.result && r.Error != nil:
			problems = append(problems, fmt.Sprintf("answer %s, want %s", r.Line, want))
		}
		answered = true
	}
	return problems, nil
}

// expectation is what JSON-RPC 2.0 says the server answers to a line.
type expectation struct {
	answer bool
	id     json.RawMessage
	code   int64 // the error's code, or 0 for any answer (a request's)
	result bool  // the answer must be a result (no error)
}

func (e expectation) String() string {
	switch {
	case !e.answer:
		return "no answer"
	case e.result:
		return "a result with id " + string(e.id)
	case e.code == 0:
		return "an answer with id " + string(e.id)
	}
	return fmt.Sprintf("error %d with id %s", e.code, e.id)
}

// sdkMaxDepth is the nesting the SDK's decoder accepts.
const sdkMaxDepth = 1000

// expect is the fuzzer's oracle, written from the JSON-RPC 2.0
// specification rather than from Transport: nothing for a blank line or a
// response (valid or not: a response is never answered), a parse error
// for what is not JSON, an Invalid Request error for JSON that is not a
// request (with the id if it is a string or a number), one answer with
// the request's id for a call, and none for a notification. Ids must be
// integers the SDK's float64 holds exactly, and nesting is bounded as the
// SDK bounds it.
func expect(line string) expectation {
	invalid := func(id json.RawMessage) expectation {
		return expectation{answer: true, id: id, code: -32600}
	}
	if len(line) > testMaxLine {
		return invalid(jsonNull) // refused for its length before it is parsed
	}
	line = strings.Trim(line, jsonSpace)
	switch {
	case line == "":
		return expectation{}
	case !json.Valid([]byte(line)):
		return expectation{answer: true, id: jsonNull, code: -32700}
	}
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(line), &m) != nil || m == nil {
		return invalid(jsonNull)
	}
	method, isRequest := m["method"]
	_, hasResult := m["result"]
	_, hasError := m["error"]
	if !isRequest && (hasResult || hasError) {
		return expectation{}
	}
	rawID, hasID := m["id"]
	id := jsonNull
	idOK := !hasID || string(rawID) == "null"
	if hasID && rawID[0] == '"' {
		id, idOK = rawID, true
	}
	if hasID && (rawID[0] == '-' || '0' <= rawID[0] && rawID[0] <= '9') {
		id = rawID
		v, err := strconv.ParseFloat(string(rawID), 64)
		idOK = err == nil && v == math.Trunc(v) && math.Abs(v) <= 1<<53
	}
	var version, name string
	params := m["params"]
	if !isRequest || !idOK || json.Unmarshal(m["jsonrpc"], &version) != nil || version != "2.0" ||
		json.Unmarshal(method, &name) != nil ||
		params != nil && !structured(params) ||
		depth(line) > sdkMaxDepth {
		return invalid(id)
	}
	if string(id) == "null" {
		return expectation{} // a notification
	}
	return expectation{answer: true, id: id}
}

// structured says whether JSON params are an object, an array or null
// (which stands for no params).
func structured(params json.RawMessage) bool {
	return params[0] == '{' || params[0] == '[' || string(params) == "null"
}

// depth is the nesting of JSON text.
func depth(s string) int {
	d, deepest := 0, 0
	dec := json.NewDecoder(strings.NewReader(s))
	for {
		tok, err := dec.Token()
		if err != nil {
			return deepest
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			d++
			deepest = max(deepest, d)
		case json.Delim('}'), json.Delim(']'):
			d--
		}
	}
}
