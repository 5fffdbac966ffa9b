package llm

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// testWindow is a window made by hand: a frame in corrupt.c, its source
// 19-29, a watchpoint whose history names twofiles.h:7.
func testWindow(t *testing.T) *Window {
	t.Helper()
	r, err := NewRedactor([]string{"API_TOKEN=tok-123456"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Window{redact: r, Items: []Item{
		{ID: "stop", Text: "stopped by signal SIGSEGV"},
		{ID: "frame:0", Text: "#0 sum (head=0x1) at corrupt.c:24"},
		{ID: "src:frame:0", Text: "corrupt.c:19-29", file: "corrupt.c", first: 19, last: 29},
		{ID: "watch:1", Text: "1. at #3: 0 -> 1 by set at twofiles.h:7"},
		{ID: "ev:12", Text: "#12 write(…)"},
		{ID: "regs", Text: "rax 0x0"},
	}}
}

func TestCitations(t *testing.T) {
	w := testWindow(t)
	type cite struct {
		Text     string
		ID       string
		Event    int64
		Frame    int
		File     string
		Line     int
		Verified bool
	}
	for _, c := range []struct {
		answer string
		want   []cite
	}{
		{"The write [ev:12] broke it.", []cite{{"[ev:12]", "ev:12", 12, -1, "", 0, true}}},
		{"Not there: [ev:13], [frame:1], [watch:2].", []cite{
			{"[ev:13]", "ev:13", 13, -1, "", 0, false}, {"[frame:1]", "frame:1", -1, 1, "", 0, false}, {"[watch:2]", "watch:2", -1, -1, "", 0, false}}},
		{"[stop][regs] [frame:0] [watch:1] [asm]", []cite{
			{"[stop]", "stop", -1, -1, "", 0, true}, {"[regs]", "regs", -1, -1, "", 0, true}, {"[frame:0]", "frame:0", -1, 0, "", 0, true},
			{"[watch:1]", "watch:1", -1, -1, "", 0, true}, {"[asm]", "asm", -1, -1, "", 0, false}}},
		{"Both [ev:12, frame:0; ev:#0012] and [src:frame:0].", []cite{
			{"ev:12", "ev:12", 12, -1, "", 0, true}, {"frame:0", "frame:0", -1, 0, "", 0, true}, {"ev:#0012", "ev:12", 12, -1, "", 0, true},
			{"[src:frame:0]", "src:frame:0", -1, 0, "", 0, true}}},
		{"See corrupt.c:24 and (corrupt.c:29), not corrupt.c:30 or main.cpp:3.", []cite{
			{"corrupt.c:24", "src:corrupt.c:24", -1, -1, "corrupt.c", 24, true},
			{"corrupt.c:29", "src:corrupt.c:29", -1, -1, "corrupt.c", 29, true},
			{"corrupt.c:30", "src:corrupt.c:30", -1, -1, "corrupt.c", 30, false},
			{"main.cpp:3", "src:main.cpp:3", -1, -1, "main.cpp", 3, false}}},
		{"The header `twofiles.h:7` and /src/app/corrupt.c:20: [corrupt.c:21]", []cite{
			{"twofiles.h:7", "src:twofiles.h:7", -1, -1, "twofiles.h", 7, true},
			{"/src/app/corrupt.c:20", "src:/src/app/corrupt.c:20", -1, -1, "/src/app/corrupt.c", 20, true},
			{"corrupt.c:21", "src:corrupt.c:21", -1, -1, "corrupt.c", 21, true}}},
		{"Rust lib.rs:10, Go main.go:5, C++ a.cc:1, header x.hpp:2 (not a source kind), notes.txt:4", []cite{
			{"lib.rs:10", "src:lib.rs:10", -1, -1, "lib.rs", 10, false},
			{"main.go:5", "src:main.go:5", -1, -1, "main.go", 5, false},
			{"a.cc:1", "src:a.cc:1", -1, -1, "a.cc", 1, false}}},
		{"No ids: [REDACTED], [1], [ev:], [frame:x], array[3], 0x4052a0:8, corrupt.cx:3, mycorrupt.c.bak:2", nil},
	} {
		var got []cite
		for _, ct := range Citations(c.answer, w) {
			if c.answer[ct.Start:ct.End] != ct.Text {
				t.Errorf("%q: citation %q at %d:%d is %q", c.answer, ct.Text, ct.Start, ct.End, c.answer[ct.Start:ct.End])
			}
			got = append(got, cite{ct.Text, ct.ID, ct.Event, ct.Frame, ct.File, ct.Line, ct.Verified})
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Citations(%q)\n got %+v\nwant %+v", c.answer, got, c.want)
		}
	}
	// Without a window nothing is verified.
	for _, ct := range Citations("[stop] corrupt.c:24", nil) {
		if ct.Verified {
			t.Errorf("%s verified without a window", ct.ID)
		}
	}
}

// fakeProvider records the request it gets and answers in two deltas.
type fakeProvider struct {
	req Request
	err error
}

func (f *fakeProvider) Name() string { return "fake" }

func (f *fakeProvider) Complete(_ context.Context, req Request, onDelta func(string)) (string, error) {
	f.req = req
	if onDelta != nil {
		onDelta("see ")
		onDelta("[stop]")
	}
	return "see [stop]", f.err
}

func TestAsk(t *testing.T) {
	w := testWindow(t)
	for _, c := range []struct {
		name     string
		p        Provider
		question string
		stream   bool
		wantErr  string
	}{
		{name: "streamed", p: &fakeProvider{}, question: "why does tok-123456 crash?", stream: true},
		{name: "whole", p: &fakeProvider{}, question: "  why?  "},
		{name: "provider error", p: &fakeProvider{err: errors.New("llm: fake: 500: boom")}, question: "why?", wantErr: "llm: fake: 500: boom"},
		{name: "no provider", question: "why?", wantErr: "no provider configured"},
		{name: "no question", p: &fakeProvider{}, question: " \n", wantErr: "llm: ask: empty question"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var deltas []string
			var onDelta func(string)
			if c.stream {
				onDelta = func(d string) { deltas = append(deltas, d) }
			}
			answer, err := Ask(context.Background(), c.p, w, c.question, "model-x", onDelta)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				if c.p == nil && !errors.Is(err, ErrNoProvider) {
					t.Errorf("err = %v, want ErrNoProvider", err)
				}
				return
			}
			if err != nil || answer != "see [stop]" {
				t.Fatalf("Ask = %q, %v", answer, err)
			}
			req := c.p.(*fakeProvider).req
			if req.System != SystemPrompt || req.Model != "model-x" || req.Stream != c.stream || len(req.Messages) != 1 || req.Messages[0].Role != "user" {
				t.Errorf("request %+v", req)
			}
			user := req.Messages[0].Content
			if !strings.HasPrefix(user, w.Render()) || !strings.HasSuffix(user, "\nQuestion: "+w.redact.Redact(strings.TrimSpace(c.question))) {
				t.Errorf("user message is not the window and the question:\n%s", user)
			}
			if strings.Contains(user, "tok-123456") {
				t.Errorf("the question's secret was sent: %s", user)
			}
			if c.stream && !reflect.DeepEqual(deltas, []string{"see ", "[stop]"}) {
				t.Errorf("deltas %q", deltas)
			}
		})
	}
	for _, want := range []string{"recorded run", "evidence", "[ev:1234]", "file.c:15"} {
		if !strings.Contains(SystemPrompt, want) {
			t.Errorf("the system prompt lacks %q", want)
		}
	}
	if _, err := Ask(context.Background(), &fakeProvider{}, nil, "why?", "", nil); err == nil {
		t.Error("Ask without a window succeeded")
	}
}
