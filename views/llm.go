package views

import (
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/keymaps"
)

// Messages between the root and the LLM pane.
type (
	// AskLLM asks the root to send the question with the current window.
	AskLLM struct{ Question string }
	// LLMUpdate is the state of an answer: streamed text so far, then the
	// final one with its citations (Done), or an error. Setup, when set,
	// replaces everything: no provider is configured and it says how to
	// set one up.
	LLMUpdate struct {
		Question  string
		Text      string
		Done      bool
		Err       string
		Setup     string
		Citations []Citation
		// Window summarises what was sent ("42 items, ~6100 tokens").
		Window string
	}
)

// Citation is a reference in an answer to evidence of the window.
type Citation struct {
	Text       string // as written in the answer: "[ev:1234]", "corrupt.c:16"
	Start, End int    // byte offsets in the answer
	// Command goes to the cited place ("goto #1234", "frame 1",
	// "list corrupt.c:16"); empty when there is nowhere to go.
	Command  string
	Verified bool // the id was in the window sent
}

// LLM is the pane of the language model: the question, the answer as it
// streams, and its citations, highlighted; the cursor moves from citation
// to citation and Enter goes to the cited moment, frame or line. A
// citation of an id that was not in the window is marked unverified.
type LLM struct {
	ctx    *Context
	w, h   int
	st     LLMUpdate
	cursor int // index into st.Citations
	off    int // first line shown
	input  bool
	q      []rune
}

// NewLLM returns the pane, waiting for a question.
func NewLLM(ctx *Context) *LLM { return &LLM{ctx: ctx} }

// Title is the pane's name.
func (l *LLM) Title() string { return "LLM" }

// Help lists the pane's own actions.
func (l *LLM) Help() []keymaps.Action {
	return []keymaps.Action{keymaps.Enter, keymaps.Up, keymaps.Down, keymaps.Filter, keymaps.PageUp, keymaps.PageDown}
}

// SetSize sets the inner size.
func (l *LLM) SetSize(w, h int) { l.w, l.h = w, h }

// SetSnapshot does nothing: answers are about the moment they were asked.
func (l *LLM) SetSnapshot(*debugger.Snapshot) {}

// Typing says whether a question is being typed in the pane.
func (l *LLM) Typing() bool { return l.input }

// Update handles answers and keys.
func (l *LLM) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case LLMUpdate:
		if msg.Question != l.st.Question {
			l.off, l.cursor = 0, 0
		}
		l.st = msg
		if l.cursor >= len(l.st.Citations) {
			l.cursor = 0
		}
		return nil
	case tea.KeyPressMsg:
		return l.key(msg)
	}
	return nil
}

func (l *LLM) key(k tea.KeyPressMsg) tea.Cmd {
	ks := l.ctx.Keys
	s := k.String()
	if l.input {
		switch s {
		case "enter":
			l.input = false
			q := strings.TrimSpace(string(l.q))
			if q == "" {
				return nil
			}
			return func() tea.Msg { return AskLLM{Question: q} }
		case "esc", "ctrl+c":
			l.input = false
		case "backspace":
			if len(l.q) > 0 {
				l.q = l.q[:len(l.q)-1]
			}
		case "space":
			l.q = append(l.q, ' ')
		default:
			if k.Text != "" {
				l.q = append(l.q, []rune(k.Text)...)
			}
		}
		return nil
	}
	switch {
	case ks.Matches(s, keymaps.Filter) || ks.Matches(s, keymaps.Ask):
		l.OpenQuestion()
	case ks.Matches(s, keymaps.Down) || ks.Matches(s, keymaps.Right):
		if l.cursor < len(l.st.Citations)-1 {
			l.cursor++
		}
	case ks.Matches(s, keymaps.Up) || ks.Matches(s, keymaps.Left):
		if l.cursor > 0 {
			l.cursor--
		}
	case ks.Matches(s, keymaps.PageDown):
		l.off += max(1, l.h-2)
	case ks.Matches(s, keymaps.PageUp):
		l.off = max(0, l.off-max(1, l.h-2))
	case ks.Matches(s, keymaps.Enter):
		if l.cursor < len(l.st.Citations) {
			if c := l.st.Citations[l.cursor]; c.Command != "" {
				return paneRun(c.Command)
			}
		}
	}
	return nil
}

// OpenQuestion opens the question line (the ask key).
func (l *LLM) OpenQuestion() { l.input, l.q = true, nil }

// View renders the pane.
func (l *LLM) View() string {
	th := l.ctx.Theme
	if l.w <= 0 || l.h <= 0 {
		return paneBlock(nil, l.w, l.h)
	}
	var lines []string
	if l.input {
		lines = append(lines, th.Prompt.Render("ask: ")+string(l.q)+"█")
	}
	switch {
	case l.st.Setup != "":
		for _, p := range strings.Split(l.st.Setup, "\n") {
			lines = append(lines, strings.Split(ansi.Wordwrap(p, l.w, " "), "\n")...)
		}
		return paneBlock(lines, l.w, l.h)
	case l.st.Question == "" && !l.input:
		return paneHint(th.Muted, l.w, l.h, keyFor(l.ctx, keymaps.Ask)+" or "+keyFor(l.ctx, keymaps.Prompt)+"ask QUESTION asks the model about this moment")
	}
	if l.st.Question != "" {
		lines = append(lines, th.Title.Render("Q: ")+l.st.Question)
		if l.st.Window != "" {
			lines = append(lines, th.Muted.Render("sent "+l.st.Window))
		}
	}
	body := l.highlighted()
	for _, p := range strings.Split(body, "\n") {
		lines = append(lines, strings.Split(ansi.Wrap(p, l.w, " "), "\n")...)
	}
	switch {
	case l.st.Err != "":
		lines = append(lines, th.Error.Render("error: "+l.st.Err))
	case !l.st.Done && l.st.Question != "":
		lines = append(lines, th.Muted.Render("…"))
	case len(l.st.Citations) > 0:
		lines = append(lines, th.Muted.Render(strconv.Itoa(len(l.st.Citations))+" citations: ↑↓ to choose, Enter to go"))
	}
	if l.off > max(0, len(lines)-l.h) {
		l.off = max(0, len(lines)-l.h)
	}
	return paneBlock(lines[l.off:], l.w, l.h)
}

// highlighted renders the answer with its citations styled: verified ones
// as keys, unverified ones as errors with a "?" mark, the selected one
// reversed.
func (l *LLM) highlighted() string {
	th := l.ctx.Theme
	text := l.st.Text
	var b strings.Builder
	at := 0
	for i, c := range l.st.Citations {
		if c.Start < at || c.End > len(text) || c.Start > c.End {
			continue
		}
		b.WriteString(text[at:c.Start])
		st := th.Key
		mark := ""
		if !c.Verified {
			st, mark = th.Error, "?"
		}
		if i == l.cursor {
			st = st.Reverse(true)
		}
		b.WriteString(st.Render(text[c.Start:c.End] + mark))
		at = c.End
	}
	b.WriteString(text[at:])
	return b.String()
}
