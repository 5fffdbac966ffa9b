package ui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/rewind-debugger/rewind/llm"
	"github.com/rewind-debugger/rewind/views"
)

// llmConfig resolves the provider settings: config.toml's [llm], then the
// REWIND_LLM_* environment.
func (m *Model) llmConfig() llm.Config {
	return llm.ConfigFromEnv(m.cfg.LLM, os.Getenv)
}

// askMsg carries one step of an answer from the background; seq tells
// the answers of successive questions apart.
type askMsg struct {
	seq  int
	up   views.LLMUpdate
	next tea.Cmd
}

// ask sends the question with the window of the current moment, in the
// background, streaming the answer into the LLM pane.
func (m *Model) ask(question string) tea.Cmd {
	question = strings.TrimSpace(question)
	m.focus = pLLM
	m.resize()
	if question == "" {
		return func() tea.Msg { return views.LLMUpdate{Err: "ask what? (:ask QUESTION)"} }
	}
	cfg := m.llmConfig()
	prov, err := llm.New(cfg, http.DefaultClient)
	if err != nil {
		up := views.LLMUpdate{Question: question, Err: err.Error()}
		if errors.Is(err, llm.ErrNoProvider) {
			up = views.LLMUpdate{Setup: err.Error()}
		}
		return func() tea.Msg { return up }
	}
	if m.busy {
		return func() tea.Msg {
			return views.LLMUpdate{Question: question, Err: "busy: " + m.busyCmd + " is running (Esc cancels it)"}
		}
	}
	ch := make(chan views.LLMUpdate, 64)
	eng := m.eng
	if m.askCancel != nil {
		m.askCancel() // a new question replaces the one still streaming
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.askCancel = cancel
	m.askSeq++
	seq := m.askSeq
	go func() {
		defer close(ch)
		eng.mu.Lock()
		red, err := llm.NewRedactor(eng.s.Header().Env, cfg.Redact)
		var w *llm.Window
		if err == nil {
			w, err = llm.Build(eng.s, llm.WindowOptions{Budget: cfg.Budget, Redact: red})
		}
		eng.mu.Unlock()
		if err != nil {
			ch <- views.LLMUpdate{Question: question, Err: err.Error(), Done: true}
			return
		}
		sent := fmt.Sprintf("%d items, ~%d tokens (%d left out) to %s", len(w.Items), w.Tokens, len(w.Omitted), prov.Name())
		var sb strings.Builder
		ch <- views.LLMUpdate{Question: question, Window: sent}
		answer, err := llm.Ask(ctx, prov, w, question, cfg.Model, func(d string) {
			sb.WriteString(d)
			select {
			case ch <- views.LLMUpdate{Question: question, Window: sent, Text: sb.String()}:
			default: // the UI is behind: the next update carries the text
			}
		})
		up := views.LLMUpdate{Question: question, Window: sent, Text: answer, Done: true}
		if err != nil {
			up.Err, up.Text = err.Error(), sb.String()
		}
		for _, c := range llm.Citations(answer, w) {
			up.Citations = append(up.Citations, views.Citation{Text: c.Text, Start: c.Start, End: c.End,
				Command: citationCommand(c), Verified: c.Verified})
		}
		ch <- up
	}()
	var wait func() tea.Msg
	wait = func() tea.Msg {
		up, ok := <-ch
		if !ok {
			return nil
		}
		return askMsg{seq: seq, up: up, next: wait}
	}
	return wait
}

// citationCommand is where selecting a citation goes.
func citationCommand(c llm.Citation) string {
	switch {
	case strings.HasPrefix(c.ID, "ev:"):
		return fmt.Sprintf("goto #%d", c.Event)
	case strings.HasPrefix(c.ID, "frame:"):
		return fmt.Sprintf("frame %d", c.Frame)
	case c.File != "" && c.Line > 0:
		return fmt.Sprintf("list %s:%d", c.File, c.Line)
	case strings.HasPrefix(c.ID, "watch:"):
		return "info breakpoints"
	}
	return ""
}
