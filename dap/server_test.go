package dap

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-dap"
)

// TestBadMessages: what a broken or early client sends gets an error
// response naming the request, and the server answers the next message.
func TestBadMessages(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		seq           int
		want          string
	}{
		{"cut JSON", `{"seq": 3, "type": "request", "command": "initialize",`, 0, "malformed message"},
		{"not an object", `[1, 2, 3]`, 0, "malformed message"},
		{"unknown request", `{"seq": 4, "type": "request", "command": "frobnicate"}`, 4, `unsupported request "frobnicate"`},
		{"bad message type", `{"seq": 5, "type": "telegram"}`, 5, "malformed message"},
		{"arguments of the wrong type", `{"seq": 6, "type": "request", "command": "next", "arguments": {"threadId": "one"}}`, 6, "malformed message"},
		{"before launch", `{"seq": 7, "type": "request", "command": "stackTrace", "arguments": {"threadId": 1}}`, 7, "send launch"},
		{"launch without a recording", `{"seq": 8, "type": "request", "command": "launch", "arguments": {}}`, 8, `"trace"`},
		{"launch of a missing trace", `{"seq": 9, "type": "request", "command": "launch", "arguments": {"trace": "/nonexistent/x.rwd"}}`, 9, "/nonexistent/x.rwd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, out := serve(t)
			if err := dap.WriteBaseMessage(in, []byte(tc.content)); err != nil {
				t.Fatal(err)
			}
			m, err := dap.ReadProtocolMessage(out)
			if err != nil {
				t.Fatal(err)
			}
			r, ok := m.(*dap.ErrorResponse)
			if !ok || r.Success || r.RequestSeq != tc.seq || !strings.Contains(r.Message, tc.want) {
				t.Fatalf("answer %+v, want an error response to %d saying %q", m, tc.seq, tc.want)
			}
			// Still serving.
			if err := dap.WriteProtocolMessage(in, &dap.InitializeRequest{Request: dap.Request{ProtocolMessage: dap.ProtocolMessage{Seq: 10, Type: "request"}, Command: "initialize"}}); err != nil {
				t.Fatal(err)
			}
			m, err = dap.ReadProtocolMessage(out)
			if r, ok := m.(*dap.InitializeResponse); err != nil || !ok || !r.Success || !r.Body.SupportsStepBack {
				t.Fatalf("initialize after %s: %+v %v", tc.name, m, err)
			}
		})
	}
}

// TestBadHeaders: a header that is not a Content-Length, or a length
// too large for a number, is answered as malformed, and the message after
// it is served.
func TestBadHeaders(t *testing.T) {
	body := `{"seq": 2, "type": "request", "command": "threads"}`
	for _, header := range []string{"Content-Type: text/plain", "Content-Length: 99999999999999999999999"} {
		t.Run(header, func(t *testing.T) {
			in, out := serve(t)
			fmt.Fprintf(in, "%s\r\n\r\nContent-Length: %d\r\n\r\n%s", header, len(body), body)
			m, err := dap.ReadProtocolMessage(out)
			if r, ok := m.(*dap.ErrorResponse); err != nil || !ok || !strings.Contains(r.Message, "malformed message") {
				t.Fatalf("bad header: %+v %v", m, err)
			}
			m, err = dap.ReadProtocolMessage(out)
			if r, ok := m.(*dap.ErrorResponse); err != nil || !ok || r.RequestSeq != 2 || !strings.Contains(r.Message, "send launch") {
				t.Fatalf("threads after a bad header: %+v %v", m, err)
			}
		})
	}
}

// serve runs a server over pipes until the test ends.
func serve(t *testing.T) (io.Writer, *bufio.Reader) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(inR, outW, Options{}) }()
	t.Cleanup(func() {
		inW.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		outR.Close()
	})
	return inW, bufio.NewReader(outR)
}
