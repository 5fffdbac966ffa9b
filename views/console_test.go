package views

import (
	"fmt"
	"strings"
	"testing"
)

// conSample is a short session.
func conSample(c *Console) {
	c.Append(ConsoleEntry{Output: "rewind demo: try  c  then  :watch -l head->next  and  C"})
	c.Append(ConsoleEntry{Command: "break sum", Output: "Breakpoint 1 at 0x401136: file list.c, line 24."})
	c.Append(ConsoleEntry{Command: "continue", Output: "Breakpoint 1, sum (head=0x4052a0) at list.c:24\n24\t\tfor (n = head; n; n = n->next)"})
	c.Append(ConsoleEntry{Command: "print *head", Output: "$1 = {value = 1, next = 0x4052c0, name = \"a rather long name that goes on and on past the width of a small pane so that it wraps\"}"})
	c.Append(ConsoleEntry{Command: "print nosuch", Output: "No symbol \"nosuch\" in current context.", Error: true})
	c.Update(ConsoleEntry{Command: "goto #1234", Output: "#1234 syscall write"})
}

func TestConsoleGolden(t *testing.T) {
	tlGolden(t, func(_ *testing.T, ctx *Context, w, h int) string {
		c := NewConsole(ctx)
		c.SetSize(w, h)
		conSample(c)
		return c.View()
	})
}

func TestConsoleGoldenScrolled(t *testing.T) {
	tlGoldenEach(t, func(_ *testing.T, ctx *Context) string {
		c := NewConsole(ctx)
		c.SetSize(40, 8)
		conSample(c)
		c.Update(ptPress("pgup"))
		return c.View()
	})
}

func TestConsoleWrapsAndScrolls(t *testing.T) {
	c := NewConsole(tlCtx(t, false))
	c.SetSize(20, 5)
	c.Append(ConsoleEntry{Command: "print s", Output: strings.Repeat("abcdefghij", 5)}) // 50 cells: 3 lines
	lines := tlPlain(c.View())
	if len(lines) != 5 || lines[0] != ":print s" || lines[1] != "abcdefghijabcdefghij" || lines[3] != "abcdefghij" || lines[4] != "" {
		t.Fatalf("wrapped:\n%q", lines)
	}
	for i := 0; i < 10; i++ {
		c.Append(ConsoleEntry{Command: fmt.Sprintf("p %d", i), Output: fmt.Sprintf("$%d = %d", i, i)})
	}
	if lines := tlPlain(c.View()); lines[4] != "$9 = 9" || lines[3] != ":p 9" {
		t.Fatalf("newest not at the bottom:\n%q", lines)
	}
	c.Update(ptPress("up"))
	c.Update(ptPress("up"))
	if lines := tlPlain(c.View()); lines[0] != "$6 = 6" || lines[3] != ":p 8" || !strings.Contains(lines[4], "3 more lines below") {
		t.Fatalf("scrolled back two:\n%q", lines)
	}
	// New output does not move a scrolled view.
	before := tlPlain(c.View())
	c.Append(ConsoleEntry{Command: "p 10", Output: "$10 = 10"})
	after := tlPlain(c.View())
	if strings.Join(before[:4], "\n") != strings.Join(after[:4], "\n") || !strings.Contains(after[4], "5 more lines below") {
		t.Fatalf("moved by new output:\n%q\n%q", before, after)
	}
	c.Update(ptPress("home"))
	if lines := tlPlain(c.View()); lines[0] != ":print s" {
		t.Fatalf("top:\n%q", lines)
	}
	c.Update(ptPress("end"))
	if lines := tlPlain(c.View()); lines[4] != "$10 = 10" {
		t.Fatalf("bottom:\n%q", lines)
	}
	c.Update(ptPress("pgup"))
	c.Update(ptPress("pgdown"))
	if lines := tlPlain(c.View()); lines[4] != "$10 = 10" {
		t.Fatalf("page up and down:\n%q", lines)
	}
	// Narrower: wrapped again.
	c.SetSize(8, 5)
	for _, l := range tlPlain(c.View()) {
		if len([]rune(l)) > 8 {
			t.Fatalf("line %q wider than 8", l)
		}
	}
}

func TestConsoleErrorsAndTabs(t *testing.T) {
	c := NewConsole(tlCtx(t, true))
	c.SetSize(40, 4)
	c.Append(ConsoleEntry{Command: "info registers", Output: "rax\t0x1c\t28"})
	c.Append(ConsoleEntry{Command: "frame 9", Output: "No frame at level 9.", Error: true})
	lines := tlPlain(c.View())
	if lines[1] != "rax     0x1c    28" || lines[3] != "! No frame at level 9." {
		t.Fatalf("no-colour errors and tabs:\n%q", lines)
	}
	c = NewConsole(tlCtx(t, false))
	c.SetSize(40, 4)
	c.Append(ConsoleEntry{Command: "frame 9", Output: "No frame at level 9.", Error: true})
	if v := c.View(); !strings.Contains(v, c.ctx.Theme.Error.Render("No frame at level 9.")) {
		t.Fatalf("error not in the error style: %q", v)
	}
}

func TestConsoleKeepsLast1000(t *testing.T) {
	c := NewConsole(tlCtx(t, false))
	c.SetSize(40, 10)
	for i := 0; i < 1005; i++ {
		c.Append(ConsoleEntry{Command: fmt.Sprintf("p %d", i), Output: "ok"})
	}
	if len(c.entries) != 1000 || c.entries[0].e.Command != "p 5" {
		t.Fatalf("%d entries, first %q", len(c.entries), c.entries[0].e.Command)
	}
	c.Update(ptPress("home"))
	if lines := tlPlain(c.View()); lines[0] != ":p 5" {
		t.Fatalf("oldest kept: %q", lines[0])
	}
}

// conPanes are Consoles in a few states, for the size checks.
func conPanes(t *testing.T) map[string]Pane {
	empty := NewConsole(tlCtx(t, false))
	full := NewConsole(tlCtx(t, true))
	conSample(full)
	return map[string]Pane{"console empty": empty, "console": full}
}
