// Package keymaps holds the key bindings of the UI: the default preset
// (gdb and rr habits), a vim preset and an emacs preset, and user
// overrides by action name, validated so that a typo or a clash is a clear
// error rather than a silently dead key.
package keymaps

import (
	"fmt"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
)

// Action names a thing a key does; config files use these names.
type Action string

// Global actions, available whatever pane has the focus.
const (
	Step          Action = "step"
	Next          Action = "next"
	Finish        Action = "finish"
	Continue      Action = "continue"
	ReverseStep   Action = "reverse-step"
	ReverseNext   Action = "reverse-next"
	ReverseFinish Action = "reverse-finish"
	ReverseCont   Action = "reverse-continue"
	StepI         Action = "stepi"
	ReverseStepI  Action = "reverse-stepi"
	Break         Action = "break"  // breakpoint at the cursor (source, disassembly)
	Watch         Action = "watch"  // watch the selected variable (locals)
	Ask           Action = "ask"    // ask the LLM about this moment
	Prompt        Action = "prompt" // the : command prompt
	Help          Action = "help"
	Quit          Action = "quit"
	FocusNext     Action = "focus-next"
	FocusPrev     Action = "focus-prev"
	Zoom          Action = "zoom"
	Cancel        Action = "cancel"
	// JumpBack returns to the moment before the last jump (an origin stop),
	// JumpForward goes to the next one again: vim's jump list.
	JumpBack    Action = "jump-back"
	JumpForward Action = "jump-forward"
	// Pane-local actions.
	Up       Action = "up"
	Down     Action = "down"
	PageUp   Action = "page-up"
	PageDown Action = "page-down"
	Top      Action = "top"
	Bottom   Action = "bottom"
	Enter    Action = "enter"  // go to the selected event, frame, write
	Expand   Action = "expand" // expand/collapse a struct, follow a pointer
	Filter   Action = "filter" // timeline filter
	Toggle   Action = "toggle" // registers: general/FP; memory: follow pointer
	Left     Action = "left"
	Right    Action = "right"
	// Origin goes back to the write that produced the value under the
	// cursor (Locals, Memory, Watch, the Console's last print; Registers
	// asks which register); OriginForward to its next write, OriginRead to
	// its next read.
	Origin        Action = "origin"
	OriginForward Action = "origin-forward"
	OriginRead    Action = "origin-read"
)

// Pane actions focus one pane (and bring it on screen when the layout has
// no place of its own for it). A new pane adds its action here, to
// PaneActions and to common, and the UI's pane table names it.
const (
	PaneSource      Action = "pane-source"
	PaneStack       Action = "pane-stack"
	PaneLocals      Action = "pane-locals"
	PaneRegisters   Action = "pane-registers"
	PaneMemory      Action = "pane-memory"
	PaneTimeline    Action = "pane-timeline"
	PaneWatch       Action = "pane-watch"
	PaneConsole     Action = "pane-console"
	PaneDisasm      Action = "pane-disassembly"
	PaneThreads     Action = "pane-threads"
	PaneProcesses   Action = "pane-processes"
	PaneBreakpoints Action = "pane-breakpoints"
	PaneLLM         Action = "pane-llm"
)

// PaneActions lists the pane actions, in the tab row's order.
var PaneActions = []Action{PaneSource, PaneStack, PaneLocals, PaneRegisters, PaneMemory, PaneTimeline,
	PaneWatch, PaneConsole, PaneDisasm, PaneThreads, PaneProcesses, PaneBreakpoints, PaneLLM}

// Actions lists every action, in help order.
var Actions = append([]Action{Step, Next, Finish, Continue, ReverseStep, ReverseNext, ReverseFinish, ReverseCont,
	StepI, ReverseStepI, Break, Watch, Ask, Prompt, Help, Quit, FocusNext, FocusPrev, Zoom, Cancel,
	JumpBack, JumpForward, Up, Down, PageUp, PageDown, Top, Bottom, Enter, Expand, Filter, Toggle, Left, Right,
	Origin, OriginForward, OriginRead}, PaneActions...)

var descriptions = map[Action]string{
	Step: "step", Next: "next", Finish: "finish", Continue: "continue",
	ReverseStep: "reverse-step", ReverseNext: "reverse-next", ReverseFinish: "reverse-finish", ReverseCont: "reverse-continue",
	StepI: "stepi", ReverseStepI: "reverse-stepi", Break: "breakpoint here", Watch: "watch selected", Ask: "ask the LLM",
	Prompt: "command", Help: "help", Quit: "quit", FocusNext: "next pane", FocusPrev: "previous pane", Zoom: "zoom pane",
	Cancel: "cancel", Up: "up", Down: "down", PageUp: "page up", PageDown: "page down", Top: "top", Bottom: "bottom",
	Enter: "go to", Expand: "expand", Filter: "filter", Toggle: "toggle", Left: "left", Right: "right",
	PaneSource: "Source pane", PaneStack: "Stack pane", PaneLocals: "Locals pane", PaneRegisters: "Registers pane",
	PaneMemory: "Memory pane", PaneTimeline: "Timeline pane", PaneWatch: "Watch pane", PaneConsole: "Console pane",
	PaneDisasm: "Disassembly pane", PaneThreads: "Threads pane", PaneProcesses: "Processes pane", PaneBreakpoints: "Breakpoints pane", PaneLLM: "LLM pane",
	JumpBack: "jump back", JumpForward: "jump forward", Origin: "origin: last write", OriginForward: "next write",
	OriginRead: "next read",
}

// Keys is a complete set of bindings, one per action.
type Keys struct {
	Preset string
	m      map[Action]key.Binding
}

// Get returns the binding of an action.
func (k *Keys) Get(a Action) key.Binding { return k.m[a] }

// Matches says whether a key (tea.KeyPressMsg.String()) triggers an action.
func (k *Keys) Matches(keyName string, a Action) bool {
	b, ok := k.m[a]
	if !ok || !b.Enabled() {
		return false
	}
	for _, s := range b.Keys() {
		if s == keyName {
			return true
		}
	}
	return false
}

// Bindings returns the bindings of actions, for help.
func (k *Keys) Bindings(as ...Action) []key.Binding {
	out := make([]key.Binding, 0, len(as))
	for _, a := range as {
		if b, ok := k.m[a]; ok && b.Enabled() {
			out = append(out, b)
		}
	}
	return out
}

type preset map[Action][]string

// common bindings shared by every preset.
var common = preset{
	Prompt: {":"}, Help: {"?"}, Quit: {"q", "ctrl+q"}, FocusNext: {"tab"}, FocusPrev: {"shift+tab"},
	Zoom: {"z"}, Cancel: {"esc", "ctrl+c"}, Up: {"up"}, Down: {"down"}, PageUp: {"pgup"}, PageDown: {"pgdown"},
	Top: {"home"}, Bottom: {"end"}, Enter: {"enter"}, Expand: {"space"}, Filter: {"/"}, Toggle: {"t"},
	Left: {"left"}, Right: {"right"},
	// Panes by number in the tab row's order, the rarer ones by letter.
	PaneSource: {"1"}, PaneStack: {"2"}, PaneLocals: {"3"}, PaneRegisters: {"4"}, PaneMemory: {"5"},
	PaneTimeline: {"6"}, PaneWatch: {"7"}, PaneConsole: {"8"}, PaneDisasm: {"9"}, PaneThreads: {"0"},
	PaneProcesses: {"P"}, PaneBreakpoints: {"B"}, PaneLLM: {"L"},
	// ctrl+i is Tab in most terminals: ctrl+] too.
	JumpBack: {"ctrl+o"}, JumpForward: {"ctrl+i", "ctrl+]"},
	Origin: {"o"}, OriginForward: {"O"}, OriginRead: {"r"},
}

var presets = map[string]preset{
	// gdb/rr habits: the command's first letter, Shift for the reverse.
	"default": {
		Step: {"s"}, Next: {"n"}, Finish: {"f"}, Continue: {"c"},
		ReverseStep: {"S"}, ReverseNext: {"N"}, ReverseFinish: {"F"}, ReverseCont: {"C"},
		StepI: {"i"}, ReverseStepI: {"I"}, Break: {"b"}, Watch: {"w"}, Ask: {"a"},
		Up: {"up", "k"}, Down: {"down", "j"},
	},
	// vim: hjkl, gg/G, ctrl-u/d; stepping on the debugger's usual letters.
	"vim": {
		Step: {"s"}, Next: {"n"}, Finish: {"f"}, Continue: {"c"},
		ReverseStep: {"S"}, ReverseNext: {"N"}, ReverseFinish: {"F"}, ReverseCont: {"C"},
		StepI: {"i"}, ReverseStepI: {"I"}, Break: {"b"}, Watch: {"w"}, Ask: {"a"},
		Up: {"k", "up"}, Down: {"j", "down"}, Left: {"h", "left"}, Right: {"l", "right"},
		PageUp: {"ctrl+u", "pgup"}, PageDown: {"ctrl+d", "pgdown"}, Top: {"g", "home"}, Bottom: {"G", "end"},
		Enter: {"enter", "o"}, Expand: {"space", "za"},
	},
	// emacs: C-n/C-p to move, M-v/C-v to page, function keys to run (as
	// gud's), Shift for the reverse.
	"emacs": {
		Step: {"f7", "alt+s"}, Next: {"f8", "alt+n"}, Finish: {"f9", "alt+f"}, Continue: {"f5", "alt+c"},
		ReverseStep: {"shift+f7", "alt+S"}, ReverseNext: {"shift+f8", "alt+N"}, ReverseFinish: {"shift+f9", "alt+F"},
		ReverseCont: {"shift+f5", "alt+C"}, StepI: {"f6", "alt+i"}, ReverseStepI: {"shift+f6", "alt+I"},
		Break: {"f2", "ctrl+@"}, Watch: {"alt+w"}, Ask: {"alt+a"},
		Up: {"ctrl+p", "up"}, Down: {"ctrl+n", "down"}, PageUp: {"alt+v", "pgup"}, PageDown: {"ctrl+v", "pgdown"},
		Top: {"alt+<", "home"}, Bottom: {"alt+>", "end"}, Left: {"ctrl+b", "left"}, Right: {"ctrl+f", "right"},
		Prompt: {":", "alt+x"}, Quit: {"q", "ctrl+q"}, Cancel: {"ctrl+g", "esc", "ctrl+c"}, Filter: {"ctrl+s", "/"},
		Origin: {"alt+o"}, OriginForward: {"alt+O"}, OriginRead: {"alt+r"}, JumpBack: {"alt+,"}, JumpForward: {"alt+."},
	},
}

// Presets lists the preset names.
func Presets() []string {
	out := make([]string, 0, len(presets))
	for n := range presets {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// New returns the keys of a preset with user overrides applied. Overrides
// map action names to key lists; unknown presets, unknown actions, empty
// key lists and one key bound to two global actions are errors.
func New(name string, overrides map[string][]string) (*Keys, error) {
	if name == "" {
		name = "default"
	}
	p, ok := presets[name]
	if !ok {
		return nil, fmt.Errorf("unknown key preset %q (one of %s)", name, strings.Join(Presets(), ", "))
	}
	k := &Keys{Preset: name, m: map[Action]key.Binding{}}
	for _, a := range Actions {
		keys := p[a]
		if keys == nil {
			keys = common[a]
		}
		k.m[a] = key.NewBinding(key.WithKeys(keys...), key.WithHelp(strings.Join(keys, "/"), descriptions[a]))
	}
	known := map[string]bool{}
	for _, a := range Actions {
		known[string(a)] = true
	}
	for name, keys := range overrides {
		if !known[name] {
			return nil, fmt.Errorf("unknown key action %q in the config (actions: %s)", name, actionList())
		}
		if len(keys) == 0 {
			return nil, fmt.Errorf("key action %q has no keys", name)
		}
		for _, s := range keys {
			if strings.TrimSpace(s) == "" {
				return nil, fmt.Errorf("key action %q has an empty key", name)
			}
		}
		a := Action(name)
		k.m[a] = key.NewBinding(key.WithKeys(keys...), key.WithHelp(strings.Join(keys, "/"), descriptions[a]))
	}
	if err := k.checkClashes(); err != nil {
		return nil, err
	}
	return k, nil
}

// global actions must not share keys: one key would do two things.
var global = append([]Action{Step, Next, Finish, Continue, ReverseStep, ReverseNext, ReverseFinish, ReverseCont,
	StepI, ReverseStepI, Prompt, Help, Quit, FocusNext, FocusPrev, Zoom, Break, Watch, Ask, JumpBack, JumpForward}, PaneActions...)

func (k *Keys) checkClashes() error {
	owner := map[string]Action{}
	for _, a := range global {
		for _, s := range k.m[a].Keys() {
			if o, ok := owner[s]; ok {
				return fmt.Errorf("key %q is bound to both %s and %s", s, o, a)
			}
			owner[s] = a
		}
	}
	return nil
}

func actionList() string {
	var s []string
	for _, a := range Actions {
		s = append(s, string(a))
	}
	return strings.Join(s, ", ")
}
