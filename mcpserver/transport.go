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
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transport is the stdio transport of `rewind mcp`: newline-delimited
// JSON-RPC over a reader and a writer, as mcp.IOTransport, except that one
// bad line does not end the session. The SDK's connection stops reading
// for good at the first line it cannot decode, which loses the recording's
// session (its moments, breakpoints, selected frame) for a client's typo.
// Transport checks every line before the SDK reads it: a line that is not
// JSON is answered with a JSON-RPC parse error (-32700, id null), a JSON
// line that is not a JSON-RPC 2.0 request, notification or response with
// an Invalid Request error (-32600, with the line's id when it has a usable
// one), and the session goes on with the next line. Blank lines are
// skipped. Batches (JSON arrays) are refused as invalid requests: MCP
// dropped JSON-RPC batching in its 2025-06-18 revision, and the SDK ends
// the session when a client of that revision sends one.
type Transport struct {
	// Reader and Writer are the client's end of the conversation; both are
	// closed when the session ends.
	Reader io.ReadCloser
	Writer io.WriteCloser
	// MaxLineLength bounds the bytes of one line; a longer line is
	// discarded and refused as an invalid request. 0 means
	// mcp.DefaultMaxLineLength.
	MaxLineLength int
}

// Connect implements mcp.Transport: the SDK's own newline-delimited
// connection, reading through the line filter and writing through the
// lock the filter's answers share.
func (t *Transport) Connect(ctx context.Context) (mcp.Connection, error) {
	limit := t.MaxLineLength
	if limit <= 0 {
		limit = mcp.DefaultMaxLineLength
	}
	w := &lineWriter{w: t.Writer}
	r := &lineFilter{in: bufio.NewReaderSize(t.Reader, 64<<10), closer: t.Reader, out: w, limit: limit}
	// The filter bounds lines and hands the SDK one checked line at a
	// time; the SDK's own bound would count the bytes its decoder reads
	// ahead, so it is off.
	conn, err := (&mcp.IOTransport{Reader: r, Writer: w, MaxLineLength: -1}).Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("mcp transport: %w", err)
	}
	return conn, nil
}

// lineWriter serialises the writes of the SDK (one whole message and its
// newline per Write) with the filter's error answers, so that two messages
// never interleave within a line.
type lineWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

func (w *lineWriter) Close() error { return w.w.Close() }

// lineFilter is the reader the SDK's connection decodes: the lines of in
// that are JSON-RPC messages, one at a time; it answers the others itself.
type lineFilter struct {
	in     *bufio.Reader
	closer io.Closer
	out    *lineWriter
	limit  int

	pending []byte // the rest of the checked line being read by the SDK
	err     error  // the end of the input, returned once pending is read
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		line, tooLong, err := f.readLine()
		if err != nil {
			// A line cut by the end of the input is still a line.
			f.err = err
		}
		if len(line) == 0 && !tooLong {
			continue
		}
		var reply *errorReply
		if tooLong {
			reply = &errorReply{ID: jsonNull, Error: jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
				Message: fmt.Sprintf("invalid request: line longer than %d bytes", f.limit)}}
		} else if reply = checkLine(line); reply == nil {
			f.pending = append(line, '\n')
			break
		}
		if reply.ID == nil {
			continue // a bad response: JSON-RPC never answers one
		}
		if werr := f.answer(reply); werr != nil {
			return 0, werr
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

func (f *lineFilter) Close() error { return f.closer.Close() }

// readLine returns the next line without its newline and JSON's
// surrounding whitespace, or tooLong (and no bytes) for a line of more
// than limit bytes before its newline, which it skips without keeping it.
// err is the reader's error (io.EOF at the end), returned with the last,
// unterminated line.
func (f *lineFilter) readLine() (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := f.in.ReadSlice('\n')
		if !tooLong {
			buf = append(buf, chunk...)
			tooLong = len(bytes.TrimSuffix(buf, []byte("\n"))) > f.limit
			if tooLong {
				buf = nil
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if tooLong {
			return nil, true, err
		}
		return bytes.Trim(buf, jsonSpace), false, err
	}
}

// jsonSpace is JSON's whitespace (RFC 8259): what may surround a value.
const jsonSpace = " \t\r\n"

// answer writes one error reply as a line of its own.
func (f *lineFilter) answer(r *errorReply) error {
	r.JSONRPC = "2.0"
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("mcp transport: encoding an error reply: %w", err)
	}
	if _, err := f.out.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("mcp transport: writing an error reply: %w", err)
	}
	return nil
}

// errorReply is a JSON-RPC error response. It is not written with the
// SDK's encoder: that one leaves out a null id, which JSON-RPC requires
// for a request whose id cannot be read.
type errorReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   jsonrpc.Error   `json:"error"`
}

var jsonNull = json.RawMessage("null")

// maxExactID bounds numeric ids: the SDK carries them as float64 then
// int64, so larger ones would be answered with another id.
const maxExactID = 1 << 53

// checkLine returns nil for a line that is a JSON-RPC message the SDK can
// read, and otherwise the error reply to it: one without an ID (not even
// null) for a bad response, which gets no reply, so that two peers never
// answer each other's errors forever. line is not empty and has no
// surrounding whitespace.
func checkLine(line []byte) *errorReply {
	invalid := func(id json.RawMessage, format string, args ...any) *errorReply {
		return &errorReply{ID: id, Error: jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: "invalid request: " + fmt.Sprintf(format, args...)}}
	}
	var raw json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return &errorReply{ID: jsonNull, Error: jsonrpc.Error{Code: jsonrpc.CodeParseError,
			Message: "parse error: " + err.Error()}}
	}
	if line[0] == '[' {
		return invalid(jsonNull, "batches are not supported")
	}
	// Keys are matched exactly, as the SDK's decoder does (encoding/json
	// would also take "ID" for "id").
	var env map[string]json.RawMessage
	if line[0] != '{' || json.Unmarshal(line, &env) != nil {
		return invalid(jsonNull, "not a JSON-RPC message object")
	}
	id, idErr := messageID(env)
	_, isRequest := env["method"]
	_, hasResult := env["result"]
	_, hasError := env["error"]
	if !isRequest && (hasResult || hasError) {
		id = nil // a response: bad ones are dropped
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		return invalid(id, "%v", err)
	}
	if idErr != nil {
		return invalid(id, "%v", idErr)
	}
	// The SDK's decoder leaves these rules of JSON-RPC 2.0 to the
	// receiver: params are structured, a response has a result or an error.
	if isRequest {
		if p := env["params"]; p != nil && !bytes.Equal(p, jsonNull) && p[0] != '{' && p[0] != '[' {
			return invalid(id, "params must be an object or an array")
		}
		return nil
	}
	if hasResult == hasError {
		return invalid(id, "a message without a method is a response, with either a result or an error")
	}
	return nil
}

// messageID returns the id of a message to echo in an error reply (null
// when it has none, or one of the wrong type), and an error for an id the
// SDK would not answer with the same value.
func messageID(env map[string]json.RawMessage) (json.RawMessage, error) {
	id := env["id"]
	switch {
	case id == nil || bytes.Equal(id, jsonNull):
		return jsonNull, nil
	case id[0] == '"':
		return id, nil
	case id[0] == '-' || '0' <= id[0] && id[0] <= '9':
		var v float64
		if err := json.Unmarshal(id, &v); err != nil || v != math.Trunc(v) || math.Abs(v) > maxExactID {
			return id, errors.New("a numeric id must be an integer of at most 2^53")
		}
		return id, nil
	}
	return jsonNull, errors.New("id must be a string or a number")
}
