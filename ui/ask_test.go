package ui

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// TestAsk: :ask against a fake OpenAI-compatible provider streams the
// answer into the LLM pane; a citation of an event of the window is
// verified and Enter on it goes to that event; one that was not sent is
// marked unverified.
func TestAsk(t *testing.T) {
	var body string
	// The fake model cites event ids taken from the request: which events
	// a recording has, and so the window, depends on the machine.
	var sent, unsent int64 = -1, -1
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		body = string(b)
		ids := map[int64]bool{}
		// An event item is "[ev:N] #N thread …" (the prompt's own
		// example ids are not items).
		for _, m := range regexp.MustCompile(`\[ev:(\d+)\] #\d+ thread`).FindAllStringSubmatch(body, -1) {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			ids[n] = true
			sent = max(sent, n)
		}
		for unsent = 0; ids[unsent]; unsent++ {
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, part := range []string{"The list walk in sum ", fmt.Sprintf("read a corrupted next pointer [ev:%d] ", sent),
			fmt.Sprintf("at corrupt.c:24; see also [ev:%d].", unsent)} {
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%q}}]}\n\n", part)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	t.Setenv("REWIND_LLM_PROVIDER", "openai")
	t.Setenv("REWIND_LLM_BASE_URL", srv.URL)
	t.Setenv("REWIND_LLM_MODEL", "fake")
	t.Setenv("REWIND_LLM_API_KEY", "")

	trace := recordC(t, "../testdata/source/corrupt.c")
	m := openModel(t, trace, 120, 36, true)
	drive(t, m, m.run("continue"))
	drive(t, m, m.run("ask why did it crash?"))
	if !strings.Contains(body, "why did it crash?") || !strings.Contains(body, "total += n-") {
		t.Fatalf("request body lacks the question or frame 0's line: %s", body)
	}
	screen := ansi.Strip(m.render())
	// The answer is wrapped to the pane's width: its words count, read
	// across the pane's lines.
	r := m.lastRects[pLLM]
	var pane []string
	for _, l := range strings.Split(screen, "\n")[r.y+1 : r.y+r.h-1] {
		pane = append(pane, ansi.Cut(l, r.x+1, r.x+r.w-1))
	}
	answer := strings.Join(strings.Fields(strings.Join(pane, " ")), " ")
	for _, want := range []string{"Q: why did it crash?", "read a corrupted next pointer", "corrupt.c:24", "citations"} {
		if !strings.Contains(answer, want) {
			t.Errorf("the LLM pane lacks %q:\n%s", want, screen)
		}
	}
	if sent < 0 {
		t.Fatalf("the request has no event ids: %s", body)
	}
	if want := fmt.Sprintf("[ev:%d]?", unsent); !strings.Contains(screen, want) {
		t.Errorf("an id outside the window is not marked unverified (%s):\n%s", want, screen)
	}
	if strings.Contains(screen, fmt.Sprintf("[ev:%d]?", sent)) {
		t.Errorf("[ev:%d], sent in the window, is marked unverified:\n%s", sent, screen)
	}
	// The first citation is [ev:sent]: Enter goes there. Leave the crash
	// first, so that staying put does not pass.
	drive(t, m, m.run("goto start"))
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	drive(t, m, cmd)
	if m.snap.Event != sent {
		t.Errorf("Enter on [ev:%d] went to #%d", sent, m.snap.Event)
	}
}

// TestAskWithoutProvider: with no provider the pane explains the setup and
// nothing is sent anywhere.
func TestAskWithoutProvider(t *testing.T) {
	for _, k := range []string{"REWIND_LLM_PROVIDER", "REWIND_LLM_BASE_URL", "REWIND_LLM_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"} {
		t.Setenv(k, "")
	}
	trace := recordC(t, "../testdata/source/corrupt.c")
	m := openModel(t, trace, 120, 36, true)
	drive(t, m, m.run("ask what happened?"))
	if screen := m.render(); !strings.Contains(screen, "REWIND_LLM_PROVIDER") {
		t.Errorf("no setup help:\n%s", screen)
	}
}
