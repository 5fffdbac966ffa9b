package llm

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/internal/testprog"
)

func TestMain(m *testing.M) { testprog.Main(m) }

// recordC compiles a C program (gcc -g -O0) and records it with an
// environment.
func recordC(t testing.TB, src string, env []string, args ...string) string {
	t.Helper()
	return testprog.RecordCT(t, src, env, args...)
}

// openTrace opens a session on a trace and runs commands, which must
// succeed.
func openTrace(t *testing.T, trace string, cmds ...string) *debugger.Session {
	t.Helper()
	s, err := debugger.Open(trace, debugger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	for _, c := range cmds {
		if r := s.Execute(c); !r.OK {
			t.Fatalf("%s: %s", c, r.Error)
		}
	}
	return s
}

// item returns the window's item with an id, or fails.
func item(t *testing.T, w *Window, id string) Item {
	t.Helper()
	for _, it := range w.Items {
		if it.ID == id {
			return it
		}
	}
	t.Fatalf("no item %s in the window (omitted %v):\n%s", id, w.Omitted, w.Render())
	return Item{}
}

// TestWindowCrash builds windows at the crash of the corrupted list of
// corrupt.c: what is in them, what a budget drops, and what it never does.
func TestWindowCrash(t *testing.T) {
	trace := recordC(t, "../testdata/source/corrupt.c", []string{"PATH=/usr/bin:/bin"})
	crash := []string{"continue", "up", "watch -l b->next"}
	for _, c := range []struct {
		name   string
		cmds   []string
		budget int
		// want maps ids to a text each must contain ("" for any).
		want    map[string]string
		absent  []string
		omitted bool
	}{
		{name: "default", cmds: crash, want: map[string]string{
			"stop":           "stopped by signal SIGSEGV",
			"frame:0":        "sum (head=0x",
			"frame:1":        "(selected frame)",
			"src:frame:0":    "=>   24          total += n->value;",
			"src:frame:1":    `printf("sum %d\n", sum(a));`,
			"locals:frame:0": "n = 0x6e69776f6c667265",
			"locals:frame:1": `name = "bravo-ov", next = 0x6e69776f6c667265`,
			"watch:1":        "by set_name at corrupt.c:16",
			"regs":           "rax 0x6e69776f6c667265",
			"asm":            "=> 0x",
			"program":        "environment variables (names only): PATH",
		}},
		{name: "at the crash", cmds: []string{"continue"}, want: map[string]string{
			"stop": "general-protection fault", "frame:0": "(selected frame)", "locals:frame:0": "total = ",
		}, absent: []string{"watch:1"}},
		{name: "watch out of scope", cmds: append(crash, "down"), want: map[string]string{
			"watch:1": "10. at #", "locals:frame:1": "b = 0x", "frame:0": "(selected frame)",
		}},
		// The loader's entry is named _start with its debug information
		// (libc6-dbg), ?? without it, as in gdb.
		{name: "before any stop", want: map[string]string{"stop": "not stopped yet", "frame:0": `^#0 (_start|\?\? \(\), pc 0x[0-9a-f]+ \(no debug information\))`}},
		{name: "tiny budget", cmds: crash, budget: 50, omitted: true,
			want:   map[string]string{"stop": "SIGSEGV", "frame:0": "", "src:frame:0": "total += n->value"},
			absent: []string{"program", "regs", "asm", "frame:1", "locals:frame:1", "watch:1"}},
		{name: "half budget", cmds: crash, budget: 1200, omitted: true,
			want:   map[string]string{"stop": "", "frame:0": "", "src:frame:0": "", "watch:1": "", "locals:frame:0": "", "frame:1": "(selected frame)", "locals:frame:1": ""},
			absent: []string{"program", "regs"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openTrace(t, trace, c.cmds...)
			before := s.Snapshot()
			w, err := Build(s, WindowOptions{Budget: c.budget})
			if err != nil {
				t.Fatal(err)
			}
			if c.budget == 0 && before.Stop != nil {
				t.Logf("default window (%s): %d tokens (estimated), %d bytes, %d items", strings.Join(c.cmds, "; "), w.Tokens, w.Bytes, len(w.Items))
			}
			if after := s.Snapshot(); after.Selected != before.Selected || after.Event != before.Event {
				t.Errorf("Build moved the session: frame %d -> %d, event %d -> %d", before.Selected, after.Selected, before.Event, after.Event)
			}
			for id, text := range c.want {
				if it := item(t, w, id); !strings.Contains(it.Text, text) && !matches(text, it.Text) {
					t.Errorf("%s lacks %q:\n%s", id, text, it.Text)
				}
			}
			for _, id := range c.absent {
				if w.Has(id) {
					t.Errorf("window has %s", id)
				}
			}
			// The farthest event gathered goes with any budget, whatever its
			// number (the machine's loader makes more or fewer events).
			if far := fmt.Sprintf("ev:%d", before.Event-defaultBefore); before.Stop != nil && before.Event >= defaultBefore && w.Has(far) != (c.budget == 0) {
				t.Errorf("the farthest event %s in the window: %v with a budget of %d", far, w.Has(far), c.budget)
			}
			if before.Stop != nil {
				// The five events just before the current moment stay.
				for e := before.Event - pinnedEvents; e < before.Event; e++ {
					item(t, w, fmt.Sprintf("ev:%d", e))
				}
			}
			if before.Event < before.Total && w.Has(fmt.Sprintf("ev:%d", before.Event)) {
				if it := item(t, w, fmt.Sprintf("ev:%d", before.Event)); !strings.Contains(it.Text, "(next: not yet happened") {
					t.Errorf("the next event is not marked: %s", it.Text)
				}
			}
			if got := len(w.Omitted) > 0; got != c.omitted {
				t.Errorf("omitted %v, want some: %v", w.Omitted, c.omitted)
			}
			if w.Bytes != len(w.Render()) || w.Tokens != (w.Bytes+3)/4 {
				t.Errorf("Bytes %d, Tokens %d for %d rendered bytes", w.Bytes, w.Tokens, len(w.Render()))
			}
			if c.budget > 0 {
				// Over budget only with nothing left to drop; and nothing kept
				// is less relevant than anything dropped.
				minKept := Pinned
				for _, it := range w.Items {
					minKept = min(minKept, it.Priority)
				}
				if w.Tokens > c.budget && minKept < Pinned {
					t.Errorf("%d tokens over a budget of %d with droppable items left", w.Tokens, c.budget)
				}
				if len(w.Omitted) > 0 && w.Omitted[0] != "program" {
					t.Errorf("dropped %s first, want the program", w.Omitted[0])
				}
			}
			for _, it := range w.Items {
				if !strings.Contains(w.Render(), "\n["+it.ID+"] "+it.Text) {
					t.Errorf("Render lacks [%s]", it.ID)
				}
			}
		})
	}
}

// TestWindowLines: a source line is in the window when a source item shows
// it or an item names it.
func TestWindowLines(t *testing.T) {
	trace := recordC(t, "../testdata/source/corrupt.c", []string{"PATH=/usr/bin:/bin"})
	s := openTrace(t, trace, "continue", "watch -l head->next")
	w, err := Build(s, WindowOptions{SourceContext: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id   string
		want bool
	}{
		{"src:corrupt.c:24", true},
		{"src:corrupt.c:22", true},
		{"src:corrupt.c:21", false}, // outside the context of 2
		{"src:/somewhere/else/corrupt.c:26", true},
		{"src:corrupt.c:33", true}, // a write of the history
		{"src:other.c:24", false},
		{"src:corrupt.c", false},
		{"frame:0", true},
		{"frame:7", false},
		{"ev:999999", false},
	} {
		if got := w.Has(c.id); got != c.want {
			t.Errorf("Has(%q) = %v, want %v", c.id, got, c.want)
		}
	}
}

// TestFitEveryBudget: at every budget the fitted window is within it unless
// only pinned items are left, and Tokens is the size of what Render prints.
func TestFitEveryBudget(t *testing.T) {
	items := []Item{
		{ID: "stop", Text: "signal SIGSEGV at main (corrupt.c:42)", Priority: Pinned},
		{ID: "frame:1", Text: strings.Repeat("f", 37), Priority: prioFrame - 10},
		{ID: "ev:7", Text: strings.Repeat("e", 61), Priority: prioNearEvent - 1},
		{ID: "ev:1", Text: strings.Repeat("x", 13), Priority: prioFarEvent - 7},
		{ID: "program", Text: strings.Repeat("p", 101), Priority: prioProgram},
	}
	all := (&Window{Items: items, moment: "#9", total: 9}).Render()
	for budget := 1; budget < 1000; budget++ {
		w := &Window{Items: append([]Item(nil), items...), moment: "#9", total: 9}
		w.fit(budget)
		if got := tokens(len(w.Render())); w.Tokens != got {
			t.Fatalf("budget %d: Tokens %d, Render is %d tokens", budget, w.Tokens, got)
		}
		if w.Tokens > budget && len(w.Items) > 1 {
			t.Fatalf("budget %d: %d tokens with %d droppable items left", budget, w.Tokens, len(w.Items)-1)
		}
		if budget >= tokens(len(all)) && len(w.Omitted) > 0 {
			t.Fatalf("budget %d: omitted %v from a window of %d tokens", budget, w.Omitted, tokens(len(all)))
		}
	}
}

// matches reports whether want, taken as a regular expression anchored
// with ^, matches text.
func matches(want, text string) bool {
	if !strings.HasPrefix(want, "^") {
		return false
	}
	re, err := regexp.Compile(want)
	return err == nil && re.MatchString(text)
}
