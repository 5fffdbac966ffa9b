package views

import (
	"strings"
	"testing"
)

// llmSample is an answer with a verified and an unverified citation.
func llmSample() LLMUpdate {
	text := "sum dereferenced a corrupted next pointer [ev:109]; it was overwritten at corrupt.c:16 by set_name [frame:1], see [ev:5]."
	cite := func(s, cmd string, ok bool) Citation {
		i := strings.Index(text, s)
		return Citation{Text: s, Start: i, End: i + len(s), Command: cmd, Verified: ok}
	}
	return LLMUpdate{Question: "why did it crash?", Text: text, Done: true, Window: "51 items, ~2092 tokens (0 left out) to openai",
		Citations: []Citation{cite("[ev:109]", "goto #109", true), cite("corrupt.c:16", "list corrupt.c:16", true),
			cite("[frame:1]", "frame 1", true), cite("[ev:5]", "goto #5", false)}}
}

func TestLLMGolden(t *testing.T) {
	tlGolden(t, func(_ *testing.T, ctx *Context, w, h int) string {
		l := NewLLM(ctx)
		l.SetSize(w, h)
		l.Update(llmSample())
		return l.View()
	})
}

func TestLLMCitationsAndQuestion(t *testing.T) {
	l := NewLLM(tlCtx(t, true))
	l.SetSize(60, 10)
	if v := strings.Join(tlPlain(l.View()), "\n"); !strings.Contains(v, ":ask") {
		t.Errorf("idle pane lacks the hint:\n%s", v)
	}
	l.Update(llmSample())
	v := strings.Join(tlPlain(l.View()), "\n")
	if !strings.Contains(v, "[ev:5]?") || strings.Contains(v, "[ev:109]?") {
		t.Errorf("unverified marks:\n%s", v)
	}
	// Enter goes to the selected citation; Down moves to the next.
	if msgs := tlMsgs(l.Update(ptPress("enter"))); len(msgs) != 1 || msgs[0] != (RunCommand{Line: "goto #109"}) {
		t.Errorf("enter: %v", msgs)
	}
	l.Update(ptPress("down"))
	l.Update(ptPress("down"))
	if msgs := tlMsgs(l.Update(ptPress("enter"))); len(msgs) != 1 || msgs[0] != (RunCommand{Line: "frame 1"}) {
		t.Errorf("enter on the third citation: %v", msgs)
	}
	// a opens the question line; letters are text; Enter asks.
	l.Update(ptPress("a"))
	if !l.Typing() {
		t.Fatal("a did not open the question line")
	}
	for _, k := range []string{"w", "h", "y", "space", "?"} {
		l.Update(ptPress(k))
	}
	if msgs := tlMsgs(l.Update(ptPress("enter"))); len(msgs) != 1 || msgs[0] != (AskLLM{Question: "why ?"}) {
		t.Errorf("ask: %v", msgs)
	}
	// No provider: the setup text replaces everything.
	l.Update(LLMUpdate{Setup: "No LLM provider is configured: set REWIND_LLM_PROVIDER"})
	if v := strings.Join(tlPlain(l.View()), "\n"); !strings.Contains(v, "REWIND_LLM_PROVIDER") {
		t.Errorf("setup:\n%s", v)
	}
	for _, sz := range [][2]int{{0, 0}, {1, 1}, {5, 3}, {200, 60}} {
		l.SetSize(sz[0], sz[1])
		l.Update(llmSample())
		lines := strings.Split(l.View(), "\n")
		if sz[1] > 0 && len(lines) != sz[1] {
			t.Errorf("%v: %d lines", sz, len(lines))
		}
	}
}
