package e2e

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestEventsNDJSON checks the stable fields of `rewind events --json` on a
// recorded program: every line is one object with event, type, thread,
// time and text; system calls carry name, args, result (and errno on
// failure); the crash carries its signal and code; filters work.
func TestEventsNDJSON(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "source/corrupt.c", 139)
	r := run(t, runOpts{}, rewind(t), "events", "--json", trace)
	if r.Code != 0 {
		t.Fatalf("events --json: %d %s", r.Code, r.Stderr)
	}
	var evs []map[string]any
	last := -1.0
	for _, l := range lines(r.Stdout) {
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("bad NDJSON line %q: %v", l, err)
		}
		for _, k := range []string{"event", "type", "thread", "time", "text"} {
			if _, ok := e[k]; !ok {
				t.Fatalf("line lacks %q: %s", k, l)
			}
		}
		if n := e["event"].(float64); n <= last {
			t.Fatalf("events out of order: %v after %v", n, last)
		} else {
			last = n
		}
		evs = append(evs, e)
	}
	var sawExec, sawFail, sawOpen bool
	for _, e := range evs {
		switch e["type"] {
		case "syscall":
			if e["name"] == nil || e["args"] == nil {
				t.Errorf("syscall without name/args: %v", e)
			}
			if e["result"] == nil && e["blocking"] == nil {
				t.Errorf("syscall without result: %v", e)
			}
			// The structured fields say what the text line says.
			var args []string
			for _, a := range e["args"].([]any) {
				args = append(args, a.(string))
			}
			if call := fmt.Sprintf("%s(%s)", e["name"], strings.Join(args, ", ")); e["resumed"] == nil && !strings.HasPrefix(e["text"].(string), call) {
				t.Errorf("args %q disagree with the text %q", call, e["text"])
			}
			if e["result"] == "-1" {
				sawFail = e["errno"] != nil && strings.HasPrefix(e["errno"].(string), "E")
			}
			if e["name"] == "openat" {
				sawOpen = strings.Contains(e["text"].(string), "libc.so.6")
			}
		case "exec":
			sawExec = true
		}
	}
	if !sawExec || !sawFail || !sawOpen {
		t.Errorf("exec %v, a failure with errno %v, openat of libc %v", sawExec, sawFail, sawOpen)
	}
	n := len(evs)
	if crash := evs[n-2]; crash["type"] != "signal" || crash["signal"] != "SIGSEGV" || crash["code"] == nil || crash["sync"] != true {
		t.Errorf("the crash event: %v", crash)
	}
	if exit := evs[n-1]; exit["type"] != "exit" || !strings.Contains(exit["status"].(string), "SIGSEGV") {
		t.Errorf("the exit event: %v", exit)
	}
	// Filters.
	f := run(t, runOpts{}, rewind(t), "events", "--json", "--type", "signal,exit", trace)
	if got := lines(f.Stdout); len(got) != 2 {
		t.Errorf("--type signal,exit: %d lines:\n%s", len(got), f.Stdout)
	}
	tid := int(evs[0]["thread"].(float64))
	th := run(t, runOpts{}, rewind(t), "events", "--json", "--thread", strconv.Itoa(tid), "--from", "10", "--to", "20", trace)
	if got := lines(th.Stdout); len(got) != 11 {
		t.Errorf("--thread --from 10 --to 20: %d lines", len(got))
	}
	if bad := run(t, runOpts{}, rewind(t), "events", "--type", "bogus", trace); bad.Code == 0 || !strings.Contains(string(bad.Stderr), "unknown type") {
		t.Errorf("--type bogus: %d %s", bad.Code, bad.Stderr)
	}
}
