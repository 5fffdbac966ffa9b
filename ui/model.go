// Package ui is the root model of the terminal UI: the layout of the
// panes, focus and zoom, the command prompt, the status bar and the help
// overlay, and the routing of engine work to the background so that the
// interface never waits for a replay.
package ui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/keymaps"
	"github.com/rewind-debugger/rewind/themes"
	"github.com/rewind-debugger/rewind/views"
)

// Options configure the UI.
type Options struct {
	Config *Config
	// NoColor forces the colourless theme (NO_COLOR).
	NoColor bool
	// Initial is the command run when the UI opens ("" stays at the
	// start; "start" goes to main's first line; "continue" to the crash
	// or the end).
	Initial string
	// Hint is shown in the Console at start (rewind demo's suggestions).
	Hint string
	// Session is the recording's session file (nil: none), set up after
	// Initial; SaveSession keeps it up to date as the user changes it.
	Session     *debugger.SessionFile
	SaveSession bool
	// Warnings are shown in the Console at start (a damaged session file).
	Warnings []string
	// Beside, when set, is shown next to the panes: the other recording's
	// side of a comparison (rewind replay --diff).
	Beside *Beside
}

// Model is the root model.
type Model struct {
	eng   *engine
	ctx   *views.Context
	cfg   *Config
	opts  Options
	panes [numPanes]views.Pane
	focus paneID
	zoom  bool
	// startLayout is the config's layout: the session file keeps the
	// layout only when :layout changed it.
	startLayout string
	w, h        int
	snap        *debugger.Snapshot
	busy        bool
	busyCmd     string
	// confirmQuit is set after q while an operation runs.
	confirmQuit bool
	prompt      textinput.Model
	prompting   bool
	history     []string
	histPos     int
	showHelp    bool
	help        help.Model
	status      string               // the last stop, one line
	traceNote   string               // an unfinished or damaged trace, marked in the status bar throughout
	darkSet     bool                 // the terminal answered with its background
	light       bool                 // and it is light
	profile     colorprofile.Profile // the colours it has (Unknown until told)
	lastRects   placement
	lay         *Layout  // the arrangement of the panes (config's layout, :layout)
	tabLines    []string // the tab row as last laid out
	tabHits     []tabHit // where its names are
	askCancel   func()
	askSeq      int
	pendingHist []views.RequestHistory
	// histRunning says the operation under way is a watch history;
	// afterHist are the commands that wait for it (pending.go).
	histRunning bool
	afterHist   []string
	// jumps are the moments origin stops left, for JumpBack/JumpForward;
	// jumpFrom is the moment a running origin command leaves.
	jumps    jumpList
	jumpFrom string
	// chain is set after an origin stop: the value under the cursor of
	// pane chainPane then; the origin keys pressed there again follow the
	// same location one write further (origin without an argument) until
	// the cursor moves or another command runs.
	chain     string
	chainPane paneID
	chainOn   bool
	// saved is the session file as last written; saveFailed says its
	// writing failed (said once).
	saved      []byte
	saveFailed bool
	// kept is what the session file had that could not be set up (a
	// watch on a local not in scope at main): it stays in the file.
	kept *debugger.SessionFile
	// beside is the other recording's side (nil: none); besideOff says
	// :diff hid it.
	beside    *views.Beside
	besideOff bool
}

// uiCommands are the prompt's commands that the UI runs itself (model.run)
// rather than the debugger's interpreter.
var uiCommands = []string{"ask", "layout", "diff"}

// promptCompletions are the phrases the prompt completes: the command
// language's, from its registry, then the UI's own.
func promptCompletions() []string {
	return append(debugger.Commands().Completions(), uiCommands...)
}

// New builds the root model over a session.
func New(s *debugger.Session, opts Options) (*Model, error) {
	cfg := opts.Config
	if cfg == nil {
		cfg = &Config{}
	}
	keys, err := keymaps.New(cfg.Keys, cfg.Bindings)
	if err != nil {
		return nil, err
	}
	lay, err := ParseLayout(cfg.Layout)
	if err != nil {
		return nil, err
	}
	m := &Model{eng: newEngine(s), ctx: &views.Context{Theme: &themes.Theme{}, Keys: keys}, cfg: cfg, opts: opts, help: help.New(), lay: lay}
	m.startLayout = lay.String()
	m.applyTheme()
	m.panes = [numPanes]views.Pane{
		pSource: views.NewSource(m.ctx), pStack: views.NewStack(m.ctx), pLocals: views.NewLocals(m.ctx),
		pConsole: views.NewConsole(m.ctx), pTimeline: views.NewTimeline(m.ctx), pWatch: views.NewWatch(m.ctx),
		pRegisters: views.NewRegisters(m.ctx), pDisasm: views.NewDisassembly(m.ctx), pMemory: views.NewMemory(m.ctx),
		pThreads: views.NewThreads(m.ctx), pProcesses: views.NewProcesses(m.ctx), pBreakpoints: views.NewBreakpoints(m.ctx), pLLM: views.NewLLM(m.ctx),
	}
	m.prompt = textinput.New()
	m.prompt.Prompt = ":"
	m.prompt.ShowSuggestions = true
	m.prompt.SetSuggestions(promptCompletions())
	if st := s.TraceStatus(); st.Message != "" {
		m.console().Append(views.ConsoleEntry{Output: st.Message, Error: true})
		m.traceNote = st.Condition.String() + " trace"
		if st.Total > st.Usable {
			m.traceNote += fmt.Sprintf(" (%d of %d events)", st.Usable, st.Total)
		}
	}
	for _, w := range s.MachineWarnings() {
		m.console().Append(views.ConsoleEntry{Output: "warning: " + w, Error: true})
	}
	if opts.Hint != "" {
		m.console().Append(views.ConsoleEntry{Command: "", Output: opts.Hint})
	}
	for _, w := range opts.Warnings {
		m.console().Append(views.ConsoleEntry{Output: "warning: " + w, Error: true})
	}
	if opts.Beside != nil {
		m.beside = views.NewBeside(m.ctx, opts.Beside.Title, opts.Beside.Lines)
	}
	if opts.Session != nil {
		m.restoreSession(opts.Session)
	}
	return m, nil
}

// applyTheme sets the configured theme, fit to the terminal's background
// (for "auto") and colour profile. The Theme is changed in place: every
// pane holds the same pointer.
func (m *Model) applyTheme() {
	th, _ := themes.ByName(m.cfg.Theme, !m.light)
	th = themes.ForProfile(th, m.profile)
	if m.opts.NoColor {
		th = themes.NoColor()
	}
	*m.ctx.Theme = *th
}

func (m *Model) console() *views.Console { return m.panes[pConsole].(*views.Console) }

// Init asks the terminal for its background and runs the initial command.
func (m *Model) Init() tea.Cmd {
	m.busy, m.busyCmd = true, m.opts.Initial
	return tea.Batch(tea.RequestBackgroundColor, m.eng.open(m.opts.Initial, m.opts.Session), tick())
}

func tick() tea.Cmd {
	return tea.Tick(100*time.Millisecond, func(time.Time) tea.Msg { return tickMsg{} })
}

// run starts a command in the background unless one is running.
func (m *Model) run(line string) tea.Cmd {
	line = strings.TrimSpace(line)
	if line == "" {
		return nil
	}
	if q, ok := strings.CutPrefix(line, "ask"); ok && (q == "" || q[0] == ' ') {
		return m.ask(q)
	}
	if line == "diff" {
		m.toggleBeside(line)
		return nil
	}
	if spec, ok := strings.CutPrefix(line, "layout"); ok && (spec == "" || spec[0] == ' ') {
		m.layoutCommand(line, strings.TrimSpace(spec))
		return nil
	}
	if m.queueAfterHistory(line) {
		return nil
	}
	if m.busy {
		m.console().Append(views.ConsoleEntry{Command: line, Output: "busy: " + m.busyCmd + " is running (Esc cancels it)", Error: true})
		return nil
	}
	m.busy, m.busyCmd, m.confirmQuit = true, line, false
	if name, _, _ := strings.Cut(line, " "); (name == "origin" || name == "o") && m.snap != nil {
		m.jumpFrom = m.snap.Moment
	}
	return tea.Batch(m.eng.command(line), tick())
}

// Update routes messages.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		m.resize()
		return m, nil
	case tea.BackgroundColorMsg:
		if !m.darkSet {
			m.light, m.darkSet = !msg.IsDark(), true
			m.applyTheme()
		}
		return m, nil
	case tea.ColorProfileMsg:
		m.profile = msg.Profile
		m.applyTheme()
		return m, nil
	case tickMsg:
		if m.busy {
			return m, tick()
		}
		return m, nil
	case resultMsg:
		cmd := m.onResult(msg)
		m.saveSession()
		return m, cmd
	case views.RunCommand:
		return m, m.run(msg.Line)
	case views.AskLLM:
		return m, m.ask(msg.Question)
	case askMsg:
		if msg.seq != m.askSeq {
			return m, msg.next // drain an answer that was replaced
		}
		if msg.up.Done {
			m.askCancel = nil
		}
		return m, tea.Batch(m.panes[pLLM].Update(msg.up), msg.next)
	case views.RequestEvents:
		return m, m.eng.events(msg)
	case views.RequestMemory:
		return m, m.eng.memory(msg)
	case views.RequestHistory:
		// A history replays the whole recording: it is an operation like a
		// command (progress, Esc), one at a time.
		if m.busy {
			m.pendingHist = append(m.pendingHist, msg)
			return m, nil
		}
		m.busy, m.busyCmd, m.histRunning = true, fmt.Sprintf("history watchpoint %d", msg.WatchID), true
		m.eng.cancelled.Store(false)
		return m, tea.Batch(m.eng.history(msg), tick())
	case views.HistoryLoaded:
		m.busy, m.histRunning = false, false
		cmds := []tea.Cmd{}
		for _, p := range m.panes {
			cmds = append(cmds, p.Update(msg))
		}
		return m, tea.Batch(append(cmds, m.nextQueued())...)
	case tea.MouseClickMsg:
		for _, t := range m.tabHits {
			if msg.Y == t.y && msg.X >= t.x && msg.X < t.x+t.w {
				m.focusPane(t.id)
				return m, nil
			}
		}
		for id, r := range m.lastRects {
			if r.contains(msg.X, msg.Y) {
				m.focus = id
			}
		}
		return m, nil
	case tea.MouseWheelMsg:
		if bw := m.besideWidth(); bw > 0 && msg.X >= m.w-bw {
			k := tea.KeyPressMsg{Code: tea.KeyDown}
			if msg.Button == tea.MouseWheelUp {
				k = tea.KeyPressMsg{Code: tea.KeyUp}
			}
			return m, m.beside.Update(k)
		}
		for id, r := range m.lastRects {
			if r.contains(msg.X, msg.Y) {
				k := tea.KeyPressMsg{Code: tea.KeyDown}
				if msg.Button == tea.MouseWheelUp {
					k = tea.KeyPressMsg{Code: tea.KeyUp}
				}
				return m, m.panes[id].Update(k)
			}
		}
		return m, nil
	case tea.KeyPressMsg:
		cmd := m.onKey(msg)
		m.saveSession()
		return m, cmd
	}
	// Everything else (answers to pane requests) goes to every pane.
	var cmds []tea.Cmd
	for _, p := range m.panes {
		cmds = append(cmds, p.Update(msg))
	}
	return m, tea.Batch(cmds...)
}

// onResult shows a finished command: Console, status, every pane.
func (m *Model) onResult(r resultMsg) tea.Cmd {
	m.busy, m.confirmQuit = false, false
	if r.res.OK && r.res.Quit {
		return tea.Quit // quit and q at the prompt end the UI, as the q key
	}
	if r.line != "" {
		out := r.res.Text
		if !r.res.OK {
			out = r.res.Error
		}
		m.console().Append(views.ConsoleEntry{Command: r.line, Output: out, Error: !r.res.OK})
	}
	if m.jumpFrom != "" {
		if r.res.OK && r.res.Stop != nil {
			m.jumps.Push(m.jumpFrom)
		}
		m.jumpFrom = ""
	}
	for _, n := range r.notes {
		m.console().Append(views.ConsoleEntry{Output: n})
	}
	for _, p := range r.problems {
		m.console().Append(views.ConsoleEntry{Output: p, Error: true})
	}
	if r.kept != nil {
		m.kept = r.kept
	}
	m.snap = r.snap
	if r.line == "start" && r.res.OK && r.res.Stop != nil && r.res.Stop.Reason == "step" {
		// Reached main: what ran before it is the loader's, folded.
		m.timeline().SetMainEvent(r.res.Stop.Event)
	}
	if r.mainEvent > 0 {
		m.timeline().SetMainEvent(r.mainEvent)
	}
	m.timeline().SetProcesses(len(r.snap.Processes))
	if st := r.snap.Stop; st != nil {
		m.status = describeStop(st)
	}
	var cmds []tea.Cmd
	for _, p := range m.panes {
		p.SetSnapshot(r.snap)
	}
	m.chainOn = false
	if st := r.res.Stop; r.res.OK && st != nil && st.Reason == "origin" {
		m.chainOn, m.chainPane, m.chain = true, m.focus, ""
		if p, ok := m.panes[m.focus].(views.Valued); ok {
			m.chain = p.OriginExpr()
		}
	}
	if mem, ok := m.panes[pMemory].(*views.Memory); ok {
		cmds = append(cmds, mem.Refresh())
	}
	for _, p := range m.panes {
		// Panes that load lazily ask for their data on the next message.
		cmds = append(cmds, p.Update(snapshotMsg{}))
	}
	return tea.Batch(append(cmds, m.nextQueued())...)
}

// snapshotMsg tells panes a new snapshot was set (for lazy loading).
type snapshotMsg struct{}

func describeStop(st *debugger.StopInfo) string {
	s := st.Reason
	if st.Signal != "" {
		s += " " + st.Signal
	}
	if st.Function != "" {
		s += " in " + st.Function
	}
	if st.File != "" {
		s += fmt.Sprintf(" at %s:%d", st.File, st.Line)
	}
	return s
}
