// Package views has one Bubble Tea component per pane of the UI: Source,
// Disassembly, Registers, Memory, Stack, Locals, Timeline, Watch, Threads,
// Breakpoints and Console. A pane renders the plain data of a
// debugger.Snapshot; it never calls the debugger. When the user asks for
// something (go to an event, break here, read memory), the pane returns a
// tea.Cmd producing one of the request messages below, and the root model
// (package ui) does the work in the background and sends the answer back.
package views

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/keymaps"
	"github.com/rewind-debugger/rewind/themes"
)

// Context is what every pane shares: the theme and the keys.
type Context struct {
	Theme *themes.Theme
	Keys  *keymaps.Keys
}

// Pane is the contract of a pane. Update receives key messages only when
// the pane has the focus, and every other message always.
type Pane interface {
	// Title is the pane's name in its frame ("Source", "Stack").
	Title() string
	// SetSize gives the inner size (without the frame).
	SetSize(w, h int)
	// SetSnapshot shows a new moment.
	SetSnapshot(s *debugger.Snapshot)
	Update(msg tea.Msg) tea.Cmd
	// View renders exactly the inner size: h lines of at most w cells.
	View() string
	// Help lists the pane's own key actions, for the help overlay.
	Help() []keymaps.Action
}

// Requests from panes to the root model.
type (
	// RunCommand runs a command of the language (DESIGN §4) as if typed at
	// the prompt; its result goes to the Console.
	RunCommand struct{ Line string }
	// RequestEvents asks for the descriptions of events [From, To).
	RequestEvents struct{ From, To int64 }
	// RequestMemory asks for Len bytes at the address of an expression.
	RequestMemory struct {
		Expr string
		Len  int
	}
	// RequestHistory asks for every write to a watchpoint's location.
	RequestHistory struct {
		WatchID int
		Expr    string
	}
)

// Answers from the root model to panes.
type (
	// EventsLoaded carries event descriptions.
	EventsLoaded struct {
		From  int64
		Items []EventItem
	}
	// MemoryLoaded carries memory contents; Err explains a failure.
	MemoryLoaded struct {
		Expr string
		Addr uint64
		Data []byte
		Err  error
	}
	// HistoryLoaded carries the writes to a watched location.
	HistoryLoaded struct {
		WatchID int
		Writes  []WriteItem
		Err     error
	}
	// ConsoleEntry is one command and its result, for the Console.
	ConsoleEntry struct {
		Command string
		Output  string
		Error   bool
	}
)

// EventItem is one event of the recording, as the timeline lists it.
type EventItem struct {
	N    int64
	Tid  int32
	Kind string // "syscall", "signal", "thread", "exec", "exit", "rdtsc", "cpuid", …
	Text string // strace-style
	// Pid is the process of the thread (0: unknown); Function the
	// function the event happened in ("" when not known).
	Pid      int32
	Function string
}

// WriteItem is one write to a watched location.
type WriteItem struct {
	Event  int64
	Moment string
	// Hits is its place among the writes of its event (the K of "#E
	// write K to 0x…"); 0 for a system call's, made as the event began.
	Hits     int
	Old, New string
	Function string
	File     string
	Line     int
	Syscall  bool
}

// paneHint is what an empty pane shows: what is missing, then what to do
// about it, each paragraph wrapped to the width and the block centred.
// It keeps the first lines when the pane is too short for all.
func paneHint(st lipgloss.Style, w, h int, paras ...string) string {
	if h <= 0 {
		return ""
	}
	var lines []string
	for _, p := range paras {
		if p == "" {
			continue
		}
		for _, l := range strings.Split(ansi.Wordwrap(p, max(w, 1), " "), "\n") {
			l = strings.TrimSpace(ansi.Truncate(l, max(w, 0), "…"))
			lines = append(lines, strings.Repeat(" ", max(0, (w-ansi.StringWidth(l))/2))+st.Render(l))
		}
	}
	if len(lines) > h {
		lines = lines[:h]
	}
	top := make([]string, (h-len(lines))/2)
	return paneBlock(append(top, lines...), w, h)
}

// keyFor is the first key of an action, as hints name it.
func keyFor(ctx *Context, a keymaps.Action) string {
	if ks := ctx.Keys.Get(a).Keys(); len(ks) > 0 {
		return ks[0]
	}
	return string(a)
}

// frameName is the selected frame's function, for hints ("" when none).
func frameName(sn *debugger.Snapshot) string {
	if sn == nil || sn.Selected < 0 || sn.Selected >= len(sn.Frames) {
		return ""
	}
	return sn.Frames[sn.Selected].Function
}
