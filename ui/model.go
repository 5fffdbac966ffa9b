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
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

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

// onKey handles keys: the prompt and the help overlay first, then global
// actions, then the focused pane.
func (m *Model) onKey(k tea.KeyPressMsg) tea.Cmd {
	ks := m.ctx.Keys
	s := k.String()
	if m.prompting {
		switch s {
		case "enter":
			line := m.prompt.Value()
			m.prompting = false
			m.prompt.Blur()
			if strings.TrimSpace(line) != "" {
				m.history = append(m.history, line)
			}
			m.histPos = len(m.history)
			return m.run(line)
		case "esc", "ctrl+c":
			m.prompting = false
			m.prompt.Blur()
			return nil
		case "up":
			if m.histPos > 0 {
				m.histPos--
				m.prompt.SetValue(m.history[m.histPos])
				m.prompt.CursorEnd()
			}
			return nil
		case "down":
			if m.histPos < len(m.history)-1 {
				m.histPos++
				m.prompt.SetValue(m.history[m.histPos])
			} else {
				m.histPos = len(m.history)
				m.prompt.SetValue("")
			}
			m.prompt.CursorEnd()
			return nil
		}
		var cmd tea.Cmd
		m.prompt, cmd = m.prompt.Update(k)
		return cmd
	}
	if m.showHelp {
		if ks.Matches(s, keymaps.Help) || ks.Matches(s, keymaps.Cancel) || ks.Matches(s, keymaps.Quit) {
			m.showHelp = false
		}
		return nil
	}
	if m.paneTyping() {
		// A filter or an expression is being typed: letters are text.
		return m.panes[m.focus].Update(k)
	}
	if ks.Matches(s, keymaps.Cancel) && m.askCancel != nil && m.focus == pLLM {
		m.askCancel() // stop a streaming answer
		m.askCancel = nil
		return nil
	}
	if ks.Matches(s, keymaps.Cancel) && m.busy {
		m.eng.cancelled.Store(true)
		m.dropQueued()
		return nil
	}
	if ks.Matches(s, keymaps.Quit) {
		if m.busy && !m.confirmQuit {
			m.confirmQuit = true
			return nil
		}
		return tea.Quit
	}
	m.confirmQuit = false
	motion := map[keymaps.Action]string{
		keymaps.Step: "step", keymaps.Next: "next", keymaps.Finish: "finish", keymaps.Continue: "continue",
		keymaps.ReverseStep: "reverse-step", keymaps.ReverseNext: "reverse-next", keymaps.ReverseFinish: "reverse-finish",
		keymaps.ReverseCont: "reverse-continue", keymaps.StepI: "stepi", keymaps.ReverseStepI: "reverse-stepi",
	}
	for _, a := range []keymaps.Action{keymaps.Step, keymaps.Next, keymaps.Finish, keymaps.Continue, keymaps.ReverseStep,
		keymaps.ReverseNext, keymaps.ReverseFinish, keymaps.ReverseCont, keymaps.StepI, keymaps.ReverseStepI} {
		if ks.Matches(s, a) {
			return m.run(motion[a])
		}
	}
	if cmd, ok := m.dataflowKey(s); ok {
		return cmd
	}
	switch {
	case ks.Matches(s, keymaps.Prompt):
		m.prompting = true
		m.prompt.SetValue("")
		m.histPos = len(m.history)
		return m.prompt.Focus()
	case ks.Matches(s, keymaps.Ask):
		m.focus = pLLM
		m.resize()
		m.panes[pLLM].(*views.LLM).OpenQuestion()
		return nil
	case ks.Matches(s, keymaps.Help):
		m.showHelp = true
		return nil
	case ks.Matches(s, keymaps.FocusNext):
		m.focusPane(m.nextPane(1))
		return nil
	case ks.Matches(s, keymaps.FocusPrev):
		m.focusPane(m.nextPane(numPanes - 1))
		return nil
	case ks.Matches(s, keymaps.Zoom):
		m.zoom = !m.zoom
		m.resize()
		return nil
	}
	for _, id := range tabOrder {
		if ks.Matches(s, paneInfos[id].key) {
			m.focusPane(id)
			return nil
		}
	}
	return m.panes[m.focus].Update(k)
}

// tabs are the panes of the tab row for this recording.
func (m *Model) tabs() []paneID {
	if m.snap == nil {
		return tabs(1)
	}
	return tabs(len(m.snap.Processes))
}

// nextPane is the pane step places after the focused one in Tab order,
// passing over those the tab row leaves out.
func (m *Model) nextPane(step paneID) paneID {
	in := map[paneID]bool{}
	for _, id := range m.tabs() {
		in[id] = true
	}
	id := (m.focus + step) % numPanes
	for !in[id] && id != m.focus {
		id = (id + step) % numPanes
	}
	return id
}

// focusPane gives a pane the focus, which brings it on screen.
func (m *Model) focusPane(id paneID) {
	m.focus = id
	m.resize()
}

// Layout is the current arrangement of the panes, for a session file to
// keep: ParseLayout(l.String()) gives it back.
func (m *Model) Layout() *Layout { return m.lay }

// SetLayout arranges the panes anew (a restored session, :layout).
func (m *Model) SetLayout(l *Layout) {
	if l == nil {
		l = DefaultLayout()
	}
	m.lay = l
	m.resize()
}

// layoutCommand is ":layout [SPEC]": without SPEC it says which layout is
// used and what else there is; with one it switches to it.
func (m *Model) layoutCommand(line, spec string) {
	if spec == "" {
		m.console().Append(views.ConsoleEntry{Command: line, Output: fmt.Sprintf("layout %s (presets: %s; or a spec, see the README)",
			m.lay, strings.Join(LayoutNames, ", "))})
		return
	}
	l, err := ParseLayout(spec)
	if err != nil {
		m.console().Append(views.ConsoleEntry{Command: line, Output: err.Error(), Error: true})
		return
	}
	m.SetLayout(l)
	m.console().Append(views.ConsoleEntry{Command: line, Output: "layout " + l.String()})
}

// dataflowKey handles the jump list keys anywhere and the origin keys on
// a pane that shows values: origin on the value under the cursor; on
// Registers, which have no cursor, the prompt opens on "origin $".
func (m *Model) dataflowKey(s string) (tea.Cmd, bool) {
	ks := m.ctx.Keys
	switch {
	case ks.Matches(s, keymaps.JumpBack):
		if m.snap == nil || m.busy {
			return nil, true
		}
		if to, ok := m.jumps.Back(m.snap.Moment); ok {
			return m.run("goto " + to), true
		}
		m.status = "jump list: nothing to go back to (o on a value jumps to its origin)"
		return nil, true
	case ks.Matches(s, keymaps.JumpForward):
		if m.busy {
			return nil, true
		}
		if to, ok := m.jumps.Forward(); ok {
			return m.run("goto " + to), true
		}
		m.status = "jump list: nothing to go forward to"
		return nil, true
	}
	verbs := map[keymaps.Action]string{keymaps.Origin: "origin", keymaps.OriginForward: "origin --forward", keymaps.OriginRead: "origin --read"}
	for _, a := range []keymaps.Action{keymaps.Origin, keymaps.OriginForward, keymaps.OriginRead} {
		if !ks.Matches(s, a) {
			continue
		}
		switch p := m.panes[m.focus].(type) {
		case views.Valued:
			e := p.OriginExpr()
			if m.chainOn && m.focus == m.chainPane && (e == m.chain || e == "") {
				return m.run(verbs[a]), true // the same location, one write further
			}
			if e != "" {
				return m.run(verbs[a] + " " + e), true
			}
			return nil, true
		case *views.Registers:
			m.prompting = true
			m.prompt.SetValue(verbs[a] + " $")
			m.prompt.CursorEnd()
			m.histPos = len(m.history)
			return m.prompt.Focus(), true
		}
	}
	return nil, false
}

// originPane says whether the focused pane takes the origin keys.
func (m *Model) originPane() bool {
	switch m.panes[m.focus].(type) {
	case views.Valued, *views.Registers:
		return true
	}
	return false
}

// paneTyping says whether the focused pane has a text input open (a
// filter, an expression), where letters are text, not actions.
func (m *Model) paneTyping() bool {
	switch p := m.panes[m.focus].(type) {
	case interface{ Typing() bool }:
		return p.Typing()
	case interface{ Editing() bool }:
		return p.Editing()
	}
	return false
}

// resize gives every visible pane its inner size.
func (m *Model) resize() {
	if m.w < MinWidth || m.h < MinHeight {
		return
	}
	m.lastRects = m.arrange()
	for id, r := range m.lastRects {
		m.panes[id].SetSize(r.w-2, r.h-2)
	}
}

// arrange places the tab row and the panes on the screen, above the status
// bar: the tab row's height depends on what fits on a line, and its
// highlights on the panes placed.
func (m *Model) arrange() placement {
	w := m.w - m.besideWidth()
	pl := layout(m.lay, w, m.h-2, m.focus, m.zoom)
	m.tabLines, m.tabHits = tabRow(m.ctx.Theme, m.ctx.Keys, w, pl, m.focus, m.tabs())
	if n := len(m.tabLines); n != 1 {
		pl = layout(m.lay, w, m.h-1-n, m.focus, m.zoom)
		m.tabLines, m.tabHits = tabRow(m.ctx.Theme, m.ctx.Keys, w, pl, m.focus, m.tabs())
	}
	out := placement{}
	for id, r := range pl {
		r.y += len(m.tabLines)
		out[id] = r
	}
	return out
}

// View draws the screen.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "rewind"
	return v
}

// render is the screen as text (View without the terminal settings).
func (m *Model) render() string {
	if m.w == 0 || m.h == 0 {
		return ""
	}
	th := m.ctx.Theme
	if m.w < MinWidth || m.h < MinHeight {
		msg := fmt.Sprintf("terminal too small (%dx%d): rewind needs %dx%d", m.w, m.h, MinWidth, MinHeight)
		lines := strings.Split(ansi.Wordwrap(msg, m.w, " "), "\n")
		for i := range lines {
			lines[i] = ansi.Truncate(lines[i], m.w, "")
		}
		if len(lines) > m.h {
			lines = lines[:m.h]
		}
		return lipgloss.Place(m.w, m.h, lipgloss.Center, lipgloss.Center, strings.Join(lines, "\n"))
	}
	rects := m.arrange()
	if fmt.Sprint(rects) != fmt.Sprint(m.lastRects) {
		m.lastRects = rects
		for id, r := range rects {
			m.panes[id].SetSize(r.w-2, r.h-2)
		}
	}
	c := newCanvas(m.w, m.h-1)
	c.place(0, 0, m.tabLines)
	for id, r := range rects {
		p := m.panes[id]
		c.place(r.x, r.y, frame(th, p.Title(), p.View(), r.w, r.h, id == m.focus))
	}
	if bw := m.besideWidth(); bw > 0 {
		m.beside.SetSize(bw-2, m.h-3)
		c.place(m.w-bw, 0, frame(th, m.beside.Title(), m.beside.View(), bw, m.h-1, false))
	}
	lines := c.render()
	if m.showHelp {
		lines = m.overlayHelp(lines)
	}
	return strings.Join(append(lines, m.statusLine()), "\n")
}

// statusLine is the moment, the stop, the position and key hints — or the
// prompt, or the progress of a running operation.
func (m *Model) statusLine() string {
	th := m.ctx.Theme
	if m.prompting {
		return ansi.Truncate(m.prompt.View(), m.w, "")
	}
	var left string
	switch {
	case m.busy && m.confirmQuit:
		left = " an operation is running: q again quits, Esc cancels it "
	case m.busy:
		d, t := m.eng.done.Load(), m.eng.total.Load()
		left = fmt.Sprintf(" %s%s… ", m.busyCmd, m.queuedNote())
		if t > 0 {
			left = fmt.Sprintf(" %s%s: replaying %d/%d (%d%%) — Esc cancels ", m.busyCmd, m.queuedNote(), d, t, d*100/t)
		}
	case m.snap != nil:
		pct := int64(0)
		if m.snap.Total > 0 {
			pct = m.snap.Event * 100 / m.snap.Total
		}
		left = fmt.Sprintf(" #%d/%d %d%% · thread %d", m.snap.Event, m.snap.Total, pct, m.snap.Thread)
		if m.traceNote != "" {
			left += " · " + m.traceNote
		}
		if m.status != "" {
			left += " · " + m.status
		}
		left += " "
	}
	hints := m.hints()
	room := m.w - lipgloss.Width(left)
	if room < 10 {
		return th.StatusBar.Render(ansi.Truncate(left, m.w, "…") + strings.Repeat(" ", max(0, m.w-lipgloss.Width(ansi.Truncate(left, m.w, "…")))))
	}
	hints = ansi.Truncate(hints, room, "")
	pad := m.w - lipgloss.Width(left) - lipgloss.Width(hints)
	return th.StatusBar.Render(left + strings.Repeat(" ", max(pad, 0)) + hints)
}

// hints are the key reminders of the status bar.
func (m *Model) hints() string {
	ks := m.ctx.Keys
	first := func(a keymaps.Action) string {
		k := ks.Get(a).Keys()
		if len(k) == 0 {
			return "?"
		}
		return k[0]
	}
	return fmt.Sprintf("%s/%s/%s/%s step/next/finish/cont · %s %s reverse · %s cmd · %s help · %s quit ",
		first(keymaps.Step), first(keymaps.Next), first(keymaps.Finish), first(keymaps.Continue),
		first(keymaps.ReverseStep), first(keymaps.ReverseCont), first(keymaps.Prompt), first(keymaps.Help), first(keymaps.Quit))
}

// overlayHelp draws the help box over the middle of the screen: the
// global bindings and the focused pane's.
func (m *Model) overlayHelp(lines []string) []string {
	ks := m.ctx.Keys
	global := ks.Bindings(keymaps.Step, keymaps.Next, keymaps.Finish, keymaps.Continue, keymaps.ReverseStep,
		keymaps.ReverseNext, keymaps.ReverseFinish, keymaps.ReverseCont, keymaps.StepI, keymaps.ReverseStepI)
	ui := ks.Bindings(keymaps.Prompt, keymaps.FocusNext, keymaps.FocusPrev, keymaps.Zoom, keymaps.JumpBack, keymaps.JumpForward,
		keymaps.Help, keymaps.Cancel, keymaps.Quit)
	pane := ks.Bindings(m.panes[m.focus].Help()...)
	if m.originPane() {
		pane = append(pane, ks.Bindings(keymaps.Origin, keymaps.OriginForward, keymaps.OriginRead)...)
	}
	m.help.Styles.FullKey = m.ctx.Theme.Key
	m.help.Styles.FullDesc = m.ctx.Theme.Base
	m.help.Styles.FullSeparator = m.ctx.Theme.Muted
	m.help.SetWidth(m.w - 4)
	body := m.help.FullHelpView([][]key.Binding{global, ui, pane})
	title := m.panes[m.focus].Title() + " — keys"
	bw := min(m.w-2, lipgloss.Width(body)+4)
	bh := min(len(lines), strings.Count(body, "\n")+3)
	box := frame(m.ctx.Theme, title, body, bw, bh, true)
	x, y := (m.w-bw)/2, (len(lines)-bh)/2
	for i, l := range box {
		if y+i >= len(lines) {
			break
		}
		row := lines[y+i]
		left := ansi.Truncate(row, x, "")
		right := ansi.TruncateLeft(row, x+bw, "")
		lines[y+i] = left + strings.Repeat(" ", max(0, x-lipgloss.Width(left))) + l + right
	}
	return lines
}
