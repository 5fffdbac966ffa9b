package views

import (
	"fmt"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/keymaps"
)

// Stack is the backtrace of the current thread as gdb prints it,
// "#0  sum (head=0x…) at corrupt.c:24", with the selected frame marked;
// Enter selects the frame under the cursor.
type Stack struct {
	ctx    *Context
	w, h   int
	frames []debugger.FrameInfo
	sel    int
	cur    paneCursor
}

// NewStack returns an empty Stack pane.
func NewStack(ctx *Context) *Stack { return &Stack{ctx: ctx} }

// Title names the pane.
func (s *Stack) Title() string { return "Stack" }

// SetSize sets the inner size.
func (s *Stack) SetSize(w, h int) {
	s.w, s.h = w, h
	s.cur.fix(len(s.frames), s.h)
}

// SetSnapshot shows a new stack with the cursor on the selected frame.
func (s *Stack) SetSnapshot(sn *debugger.Snapshot) {
	s.frames, s.sel = nil, 0
	if sn != nil {
		s.frames, s.sel = sn.Frames, sn.Selected
	}
	s.cur.pos = s.sel
	s.cur.follow(len(s.frames), s.h, false)
}

// Update moves the cursor; Enter selects the frame.
func (s *Stack) Update(msg tea.Msg) tea.Cmd {
	return s.cur.enterRuns(msg, s.ctx.Keys, len(s.frames), s.h, func(row int) string {
		return fmt.Sprintf("frame %d", s.frames[row].Level)
	})
}

// View renders the visible frames.
func (s *Stack) View() string {
	t := s.ctx.Theme
	if len(s.frames) == 0 {
		return paneHint(t.Muted, s.w, s.h, "no stack: no thread runs at this moment",
			fmt.Sprintf("%s or %s go back into the program", keyFor(s.ctx, keymaps.ReverseStep), keyFor(s.ctx, keymaps.ReverseCont)))
	}
	// "#0  sum": gdb's two columns for the level, more for deep stacks.
	levelW := max(2, len(fmt.Sprint(s.frames[len(s.frames)-1].Level)))
	var out []string
	for i := s.cur.top; i < len(s.frames) && len(out) < s.h; i++ {
		f := s.frames[i]
		row, text, muted := lipgloss.NewStyle(), t.Base, t.Muted
		if i == s.sel {
			row, text, muted = t.Current, t.Current, t.Current
		}
		if i == s.cur.pos {
			row, text, muted = t.Selected, t.Selected, t.Selected
		}
		arrow := "  "
		if i == s.sel {
			arrow = "=>"
		}
		fn := paneText(f.Function)
		if fn == "" {
			fn = "??"
		}
		segs := []paneSeg{{fmt.Sprintf("%s #%-*d ", arrow, levelW, f.Level), text}}
		if f.File == "" {
			// No line information: the pc is all there is to place it.
			segs = append(segs, paneSeg{f.PC + " in ", muted})
		}
		var args []string
		for _, a := range f.Args {
			args = append(args, paneText(a.Name)+"="+paneText(a.Value))
		}
		segs = append(segs, paneSeg{fn, text}, paneSeg{" (" + strings.Join(args, ", ") + ")", muted})
		if f.File != "" {
			segs = append(segs, paneSeg{fmt.Sprintf(" at %s:%d", filepath.Base(f.File), f.Line), text})
		}
		if f.Inlined {
			segs = append(segs, paneSeg{" [inlined]", muted})
		}
		out = append(out, paneRow(s.w, row, segs...))
	}
	return paneBlock(out, s.w, s.h)
}

// Help lists the pane's keys.
func (s *Stack) Help() []keymaps.Action {
	return []keymaps.Action{keymaps.Up, keymaps.Down, keymaps.PageUp, keymaps.PageDown, keymaps.Top, keymaps.Bottom, keymaps.Enter}
}
