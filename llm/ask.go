package llm

import (
	"context"
	"errors"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// SystemPrompt frames every question: the model debugs a recorded run,
// answers from the evidence, and cites it, so that the pane can link each
// claim to what the debugger showed and flag what it did not.
const SystemPrompt = `You are the assistant of rewind, a time-travel debugger for Linux programs. ` +
	`You are debugging a recorded run: the recording is complete and deterministic, and the user can move to any moment of it, forward or backward. ` +
	`Answer the question from the evidence given, which was taken from the replay at its current moment. ` +
	`Cite every fact you use by the id of its item in brackets, e.g. [ev:1234], [frame:0], [locals:frame:0], [watch:1], [stop], and source lines as file.c:15. ` +
	`Only cite ids that appear in the evidence. ` +
	`When the evidence is not enough, say what is missing and which debugger command would show it ` +
	`(for example "watch -l EXPR" then "reverse-continue" to find the last write, "history EXPR" for every write, "break FILE:LINE", "print EXPR"). ` +
	`Be concise and concrete.`

// Ask sends the window and the question and returns the answer, streaming
// it to onDelta when onDelta is not nil. The user message is the rendered
// window and the question; all of it goes through the window's redactor
// (the window's items already have, the question has not), so nothing the
// redactor knows leaves the process. model "" is the provider's.
func Ask(ctx context.Context, p Provider, w *Window, question string, model string, onDelta func(string)) (string, error) {
	if p == nil {
		return "", noProvider("no provider")
	}
	if w == nil {
		return "", errors.New("llm: ask: no evidence window")
	}
	question = strings.TrimSpace(question)
	if question == "" {
		return "", errors.New("llm: ask: empty question")
	}
	user := w.redact.Redact(w.Render() + "\nQuestion: " + question)
	req := Request{Model: model, System: SystemPrompt, Messages: []Message{{Role: "user", Content: user}}, Stream: onDelta != nil}
	// The providers' errors already say "llm: NAME: …".
	return p.Complete(ctx, req, onDelta)
}

// Citation is one reference to the evidence in an answer.
type Citation struct {
	// Text is answer[Start:End]: "[ev:1234]" for a lone id in brackets,
	// the id itself within a list ("[ev:1, ev:2]"), or "corrupt.c:24".
	Text       string
	Start, End int
	// ID is "ev:1234", "frame:1", "watch:1", "stop", … or "src:FILE:LINE"
	// for a source line (FILE as written).
	ID string
	// Event is the event of an "ev:N" citation, -1 otherwise.
	Event int64
	// Frame is the frame of a "frame:N", "src:frame:N" or
	// "locals:frame:N" citation, -1 otherwise.
	Frame int
	// File and Line are a source line's.
	File string
	Line int
	// Verified says the id, or the source line, was in the window.
	Verified bool
}

// The patterns are compiled when first used: at init every rewind
// process (the exec helper, record, each test's) paid for them.
var (
	// bracketRe finds bracketed text that may hold ids.
	bracketRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[([^\[\]\n]{1,200})\]`) })
	// idRe is an item id; a model may write "ev:#12" for "ev:12".
	idRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:(stop|regs|asm|program)|(ev):#?(\d+)|(frame|src:frame|locals:frame|watch):#?(\d+))$`)
	})
	// fileLineRe is a source reference: a C, C++, Go or Rust file and a
	// line, not inside a longer name.
	fileLineRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:^|[^A-Za-z0-9_./+-])((?:[A-Za-z0-9_.+-]*/)*[A-Za-z0-9_+-][A-Za-z0-9_.+-]*\.(?:c|h|cc|cpp|go|rs)):(\d+)\b`)
	})
)

// Citations finds the references to the evidence in an answer — [ev:N],
// [frame:N], [watch:N], [stop], [regs], [asm], [src:frame:N],
// [locals:frame:N], [program], alone or listed in one pair of brackets —
// and bare FILE.EXT:LINE references (c, h, cc, cpp, go, rs), in order, and
// checks each against the window (w may be nil: nothing is verified).
func Citations(answer string, w *Window) []Citation {
	var out []Citation
	for _, m := range bracketRe().FindAllStringSubmatchIndex(answer, -1) {
		inner, innerStart := answer[m[2]:m[3]], m[2]
		parts := splitList(inner)
		for _, p := range parts {
			id, ok := parseID(strings.TrimSpace(inner[p[0]:p[1]]))
			if !ok {
				continue
			}
			c := Citation{ID: id, Event: -1, Frame: -1}
			if len(parts) == 1 {
				c.Start, c.End = m[0], m[1]
			} else {
				c.Start, c.End = innerStart+p[0], innerStart+p[1]
			}
			c.Text = answer[c.Start:c.End]
			if n, ok := strings.CutPrefix(id, "ev:"); ok {
				c.Event, _ = strconv.ParseInt(n, 10, 64)
			} else if i := strings.LastIndex(id, "frame:"); i >= 0 {
				c.Frame, _ = strconv.Atoi(id[i+len("frame:"):])
			}
			c.Verified = w.Has(id)
			out = append(out, c)
		}
	}
	for _, m := range fileLineRe().FindAllStringSubmatchIndex(answer, -1) {
		line, err := strconv.Atoi(answer[m[4]:m[5]])
		if err != nil {
			continue
		}
		file := answer[m[2]:m[3]]
		c := Citation{Text: answer[m[2]:m[5]], Start: m[2], End: m[5], ID: "src:" + file + ":" + strconv.Itoa(line),
			Event: -1, Frame: -1, File: file, Line: line}
		c.Verified = w.Has(c.ID)
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// splitList cuts "ev:1, ev:2; frame:0" into the offsets of its parts,
// trimmed of spaces.
func splitList(s string) [][2]int {
	var out [][2]int
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != ',' && s[i] != ';' {
			continue
		}
		a, b := start, i
		for a < b && s[a] == ' ' {
			a++
		}
		for b > a && s[b-1] == ' ' {
			b--
		}
		if a < b {
			out = append(out, [2]int{a, b})
		}
		start = i + 1
	}
	return out
}

// parseID normalizes an id as written ("ev:#12" is "ev:12").
func parseID(s string) (string, bool) {
	m := idRe().FindStringSubmatch(s)
	switch {
	case m == nil:
		return "", false
	case m[1] != "":
		return m[1], true
	case m[2] != "":
		return "ev:" + trimZeros(m[3]), true
	default:
		return m[4] + ":" + trimZeros(m[5]), true
	}
}

// trimZeros makes "007" "7", so that ids compare as the window writes them.
func trimZeros(n string) string {
	t := strings.TrimLeft(n, "0")
	if t == "" {
		return "0"
	}
	return t
}
