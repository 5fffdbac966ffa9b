package llm

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/rewind-debugger/rewind/debugger"
)

// Item is one piece of evidence with a stable id the model must cite.
type Item struct {
	// ID is what the model cites: "stop", "ev:1234", "frame:0",
	// "src:frame:0", "locals:frame:0", "regs", "watch:1", "program".
	ID string
	// Kind groups items: stop, frame, source, locals, registers, watch,
	// event, program.
	Kind string
	// Text is the evidence, already redacted.
	Text string
	// Priority orders what goes when the window is over its budget: higher
	// is more relevant and dropped last; Pinned and above are never
	// dropped.
	Priority int

	// file and first..last are the source lines a source item shows, so
	// that a citation of file.c:15 can be checked.
	file        string
	first, last int
}

// Pinned is the priority of the evidence a window always keeps, whatever
// its budget: the stop, frame 0, frame 0's source and the five events just
// before the current moment.
const Pinned = 1000

// The priorities of the other items, from the first dropped to the last:
// the program < far events < registers < far frames' source < locals of
// outer frames < outer frames < near events < the selected frame's locals
// < watchpoint histories. Within a band, closer (to frame 0, to the
// current event) is higher.
const (
	prioProgram     = 10
	prioFarEvent    = 200 // - distance
	prioRegisters   = 250
	prioCode        = 260
	prioFrameSource = 350 // - 10 × level
	prioOuterLocals = 450 // - 10 × level
	prioFrame       = 550 // - 10 × level
	prioNearEvent   = 650 // - distance
	prioLocals      = 700
	prioWatch       = 800
)

// Bounds on what one window gathers, so that a deep recursion or a huge
// array cannot crowd out the rest before the budget even applies.
const (
	maxFrames       = 32   // frames listed
	maxDetailFrames = 8    // frames with their source and locals
	maxWrites       = 30   // writes listed per watchpoint
	maxVarLines     = 40   // lines per variable with its fields
	nearEvents      = 10   // events this close to the current one are "near"
	pinnedEvents    = 5    // events just before the current one that stay
	maxItemBytes    = 8192 // any item's text is cut beyond this
	codeBefore      = 6    // instructions listed before frame 0's pc
	codeAfter       = 3    // and after
	bytesPerToken   = 4
	defaultBudget   = 8000
	defaultBefore   = 40
	defaultAfter    = 10
	defaultContext  = 5
)

// WindowOptions bound a window. Zero values are the defaults.
type WindowOptions struct {
	// Budget is the estimated size of the rendered window in tokens
	// (default 8000).
	Budget int
	// EventsBefore and EventsAfter are how many recorded events around the
	// current one are listed (default 40 and 10).
	EventsBefore, EventsAfter int
	// SourceContext is how many lines are shown on each side of a frame's
	// line (default 5).
	SourceContext int
	// Redact hides secrets in every item; nil is a redactor of the
	// recording's environment (secrets never leave without one).
	Redact *Redactor
}

// Window is the evidence of one moment of a replay, fit to a budget.
type Window struct {
	// Items are the evidence kept, in the order they are rendered.
	Items []Item
	// Tokens estimates the size of Render() in tokens: its bytes divided
	// by 4, the usual ratio of English and code for BPE tokenizers. It is
	// an estimate, not a count: no tokenizer is bundled.
	Tokens int
	// Bytes is the size of Render().
	Bytes int
	// Omitted are the ids of the items dropped to fit the budget.
	Omitted []string

	redact *Redactor
	moment string
	total  int64
}

// Build collects the window at the session's current moment: the stop, the
// backtrace with arguments (one item per frame), the source lines around
// each frame's line, the locals of the frames with debug information, the
// write histories of the watchpoints, the recorded events around the
// current moment, frame 0's general registers and instructions, and the
// program's summary (environment names only). Every item is redacted. When
// the estimate exceeds the budget, the least relevant items are dropped
// first (see Pinned).
//
// Build runs commands on the session (history, frame, info locals) and
// leaves its selected frame as it found it; call it where the session's
// commands run, not concurrently with them.
func Build(s *debugger.Session, opts WindowOptions) (*Window, error) {
	if s == nil {
		return nil, errors.New("llm: build window: no session")
	}
	if opts.Budget <= 0 {
		opts.Budget = defaultBudget
	}
	if opts.EventsBefore <= 0 {
		opts.EventsBefore = defaultBefore
	}
	if opts.EventsAfter <= 0 {
		opts.EventsAfter = defaultAfter
	}
	if opts.SourceContext <= 0 {
		opts.SourceContext = defaultContext
	}
	hdr := s.Header()
	red := opts.Redact
	if red == nil {
		var env []string
		if hdr != nil {
			env = hdr.Env
		}
		var err error
		if red, err = NewRedactor(env, nil); err != nil {
			return nil, fmt.Errorf("llm: build window: %w", err)
		}
	}
	sn := s.Snapshot()
	sn0 := sn
	if sn.Selected != 0 {
		// The registers and code of a crash are frame 0's, whichever frame
		// the user looks at.
		if r := s.Execute("frame 0"); r.OK {
			sn0 = s.Snapshot()
			if r := s.Execute("frame " + strconv.Itoa(sn.Selected)); !r.OK {
				return nil, fmt.Errorf("llm: build window: selecting frame %d again: %s", sn.Selected, r.Error)
			}
		}
	}
	b := &builder{s: s, sn: sn, sn0: sn0, opts: opts, sources: map[string][]string{}}
	events, err := b.readEvents()
	if err != nil {
		return nil, err
	}
	b.stop(events)
	b.frames()
	b.source()
	b.locals()
	b.watches()
	b.events(events)
	b.registers()
	b.code()
	b.program()
	w := &Window{redact: red, moment: sn.Moment, total: sn.Total}
	for _, it := range b.items {
		// Redacted before it is cut, so that a cut cannot split a secret
		// into pieces no longer recognized.
		it.Text = clip(red.Redact(it.Text), maxItemBytes)
		w.Items = append(w.Items, it)
	}
	w.fit(opts.Budget)
	return w, nil
}

// builder gathers the items of one window.
type builder struct {
	s       *debugger.Session
	sn      *debugger.Snapshot // as the user left it
	sn0     *debugger.Snapshot // with frame 0 selected
	opts    WindowOptions
	items   []Item
	sources map[string][]string
}

func (b *builder) add(it Item) { b.items = append(b.items, it) }

// readEvents reads the recorded events around the current moment.
func (b *builder) readEvents() ([]debugger.EventInfo, error) {
	if b.sn.Total <= 0 {
		return nil, nil
	}
	from := max(0, b.sn.Event-int64(b.opts.EventsBefore))
	to := min(b.sn.Total-1, b.sn.Event+int64(b.opts.EventsAfter))
	evs, _, err := debugger.ReadEventRecords(b.s.Path(), from, to, debugger.EventFilter{}, 0)
	if err != nil {
		return nil, fmt.Errorf("llm: reading events %d-%d of %s: %w", from, to, b.s.Path(), err)
	}
	return evs, nil
}

// stop describes where the session is: the last stop and the current
// moment, with the signal's details from its event.
func (b *builder) stop(events []debugger.EventInfo) {
	sn := b.sn
	var t strings.Builder
	st := sn.Stop
	if st == nil {
		fmt.Fprintf(&t, "not stopped yet: at %s, thread %d", sn.Moment, sn.Thread)
		if len(sn.Frames) > 0 {
			fmt.Fprintf(&t, ", in %s", frameWhere(sn.Frames[0]))
		}
	} else {
		fmt.Fprintf(&t, "stopped by %s", st.Reason)
		if st.Signal != "" {
			fmt.Fprintf(&t, " %s", st.Signal)
		}
		if st.Breakpoint != 0 {
			fmt.Fprintf(&t, " (breakpoint %d)", st.Breakpoint)
		}
		fmt.Fprintf(&t, " at %s, thread %d, pc %s", st.Moment, st.Thread, st.PC)
		if st.Function != "" {
			fmt.Fprintf(&t, ", in %s", st.Function)
		}
		if st.File != "" {
			fmt.Fprintf(&t, " at %s:%d", filepath.Base(st.File), st.Line)
		}
		if st.Watch != nil {
			fmt.Fprintf(&t, "\nwatchpoint %d (%s) changed: %s -> %s", st.Watch.ID, st.Watch.Expr, st.Watch.Old, st.Watch.New)
		}
		if st.Signal != "" {
			for _, e := range events {
				if e.Type == "signal" && e.Signal == st.Signal && e.Event >= st.Event-1 && e.Event <= st.Event+1 {
					fmt.Fprintf(&t, "\nthe signal [ev:%d]: %s", e.Event, signalDetails(e))
					break
				}
			}
		}
		if st.Event != sn.Event || st.Thread != sn.Thread {
			fmt.Fprintf(&t, "\nthe session has moved since: now at %s, thread %d", sn.Moment, sn.Thread)
		}
	}
	fmt.Fprintf(&t, "\nthe recording has %d events", sn.Total)
	b.add(Item{ID: "stop", Kind: "stop", Text: t.String(), Priority: Pinned})
}

// signalDetails is what a signal event says beyond its name.
func signalDetails(e debugger.EventInfo) string {
	parts := []string{e.Signal}
	if e.Code != "" {
		parts = append(parts, e.Code)
	}
	if e.Sync {
		parts = append(parts, "caused by the instruction")
	} else {
		parts = append(parts, "sent")
	}
	switch {
	case e.Signal == "SIGSEGV" && e.Code == "SI_KERNEL":
		// The kernel gives no address for a general-protection fault; a
		// model would otherwise read "0x0" as a NULL dereference.
		parts = append(parts, "a general-protection fault (for example a non-canonical pointer): the kernel reports no fault address")
	case e.Addr != "":
		parts = append(parts, "fault address "+e.Addr)
	}
	if e.PC != "" {
		parts = append(parts, "pc "+e.PC)
	}
	return strings.Join(parts, ", ")
}

// frameWhere is "sum (head=0x4052a0) at corrupt.c:24", as a backtrace
// shows a frame.
func frameWhere(f debugger.FrameInfo) string {
	name := f.Function
	if name == "" {
		name = "??"
	}
	var args []string
	for _, a := range f.Args {
		args = append(args, a.Name+"="+a.Value)
	}
	s := name + " (" + strings.Join(args, ", ") + ")"
	if f.File != "" {
		s += fmt.Sprintf(" at %s:%d", filepath.Base(f.File), f.Line)
	}
	return s
}

// frames adds the backtrace, one item per frame.
func (b *builder) frames() {
	fs := b.sn.Frames
	for i, f := range fs {
		if i == maxFrames {
			break
		}
		t := fmt.Sprintf("#%d %s, pc %s", f.Level, frameWhere(f), f.PC)
		if f.Inlined {
			t += " (inlined)"
		}
		if f.File == "" {
			t += " (no debug information)"
		}
		if i == b.sn.Selected {
			t += " (selected frame)"
		}
		if i == maxFrames-1 && len(fs) > maxFrames {
			t += fmt.Sprintf("\n(%d outer frames not listed)", len(fs)-maxFrames)
		}
		prio := Pinned
		switch {
		case i == b.sn.Selected && i > 0:
			// The frame the user is looking at goes with its locals.
			prio = prioLocals
		case i > 0:
			prio = prioFrame - 10*min(i, 10)
		}
		b.add(Item{ID: fmt.Sprintf("frame:%d", f.Level), Kind: "frame", Text: t, Priority: prio})
	}
}

// readSource reads a source file once per window, through the session's
// lookup (this machine's file, else the recording's copy); nil if neither
// (the binary may have been built elsewhere).
func (b *builder) readSource(path string) []string {
	if l, ok := b.sources[path]; ok {
		return l
	}
	var lines []string
	if src, err := b.s.Source(path); err == nil {
		lines = src.Lines
	}
	b.sources[path] = lines
	return lines
}

// source adds the lines around each frame's line.
func (b *builder) source() {
	for i, f := range b.sn.Frames {
		if i == maxDetailFrames {
			break
		}
		if f.File == "" || f.Line <= 0 {
			continue
		}
		lines := b.readSource(f.FullName)
		if f.Line > len(lines) {
			continue
		}
		first := max(1, f.Line-b.opts.SourceContext)
		last := min(len(lines), f.Line+b.opts.SourceContext)
		var t strings.Builder
		short := filepath.Base(f.File)
		fmt.Fprintf(&t, "%s:%d-%d, frame %d (%s), \"=>\" marks line %d:", short, first, last, i, f.Function, f.Line)
		for n := first; n <= last; n++ {
			mark := "  "
			if n == f.Line {
				mark = "=>"
			}
			fmt.Fprintf(&t, "\n%s %4d  %s", mark, n, strings.ReplaceAll(lines[n-1], "\t", "    "))
		}
		prio := Pinned
		switch {
		case i == b.sn.Selected && i > 0:
			prio = prioLocals
		case i > 0:
			prio = prioFrameSource - 10*i
		}
		b.add(Item{ID: fmt.Sprintf("src:frame:%d", i), Kind: "source", Text: t.String(), Priority: prio, file: short, first: first, last: last})
	}
}

// locals adds the variables of the frames with debug information: the
// selected frame's from the snapshot, with their fields; the others' by
// selecting each frame in turn, then the selected one again.
func (b *builder) locals() {
	sel := b.sn.Selected
	moved := false
	for i, f := range b.sn.Frames {
		if i == maxDetailFrames {
			break
		}
		if f.File == "" {
			continue
		}
		var t strings.Builder
		fmt.Fprintf(&t, "frame %d (%s)", i, f.Function)
		switch {
		case i == sel:
			writeVars(&t, "arguments", b.sn.Args)
			writeVars(&t, "locals", b.sn.Locals)
		case i == 0 && b.sn0.Selected == 0:
			writeVars(&t, "arguments", b.sn0.Args)
			writeVars(&t, "locals", b.sn0.Locals)
		default:
			moved = true
			if r := b.s.Execute("frame " + strconv.Itoa(i)); !r.OK {
				continue
			}
			r := b.s.Execute("info locals")
			vars, _ := r.Value.([]debugger.VarInfo)
			if !r.OK {
				continue
			}
			nodes := make([]debugger.VarNode, len(vars))
			for k, v := range vars {
				nodes[k] = debugger.VarNode{Name: v.Name, Type: v.Type, Value: v.Value}
			}
			writeVars(&t, "locals", nodes)
		}
		prio := prioOuterLocals - 10*min(i, 10)
		if i == 0 || i == sel {
			prio = prioLocals
		}
		b.add(Item{ID: fmt.Sprintf("locals:frame:%d", i), Kind: "locals", Text: t.String(), Priority: prio})
	}
	if moved {
		b.s.Execute("frame " + strconv.Itoa(sel))
	}
}

// writeVars lists variables with their fields, two levels deep.
func writeVars(t *strings.Builder, what string, vars []debugger.VarNode) {
	if len(vars) == 0 {
		fmt.Fprintf(t, "\n%s: none", what)
		return
	}
	fmt.Fprintf(t, "\n%s:", what)
	for _, v := range vars {
		n := 0
		writeVar(t, v, 1, &n)
	}
}

func writeVar(t *strings.Builder, v debugger.VarNode, depth int, n *int) {
	if *n >= maxVarLines {
		if *n == maxVarLines {
			fmt.Fprintf(t, "\n%s…", strings.Repeat("  ", depth))
			*n++
		}
		return
	}
	*n++
	typ := ""
	if v.Type != "" {
		typ = " (" + v.Type + ")"
	}
	fmt.Fprintf(t, "\n%s%s = %s%s", strings.Repeat("  ", depth), v.Name, v.Value, typ)
	if strings.HasPrefix(v.Value, "{") || strings.HasPrefix(v.Value, `"`) {
		// A struct, an array or a string already shows its members; a
		// string's characters one per line would also slip past the
		// redactor.
		return
	}
	for _, c := range v.Children {
		writeVar(t, c, depth+1, n)
	}
}

// watches adds every write to each watchpoint's location over the whole
// recording.
func (b *builder) watches() {
	for _, wp := range b.sn.Watches {
		kind := "write"
		if wp.Access {
			kind = "read/write (only writes are listed)"
		}
		var t strings.Builder
		fmt.Fprintf(&t, "watchpoint %d: %s (%d bytes at %s, %s)", wp.ID, wp.Expr, wp.Size, wp.Addr, kind)
		// A watchpoint watches the address its expression had when it was
		// set; the expression now may name another place (another frame's
		// variable) or nothing, so the history is the address's.
		r := b.s.Execute(fmt.Sprintf("history *(%s *)%s", sizeType(wp.Size), wp.Addr))
		writes, _ := r.Value.([]debugger.HistoryWrite)
		switch {
		case !r.OK:
			fmt.Fprintf(&t, "\nhistory unavailable: %s", r.Error)
		case len(writes) == 0:
			t.WriteString("\nno writes over the whole recording")
		default:
			fmt.Fprintf(&t, "\n%d writes over the whole recording:", len(writes))
			for i, w := range writes {
				if len(writes) > maxWrites && i == 5 {
					fmt.Fprintf(&t, "\n  … %d writes not listed …", len(writes)-maxWrites)
				}
				if len(writes) > maxWrites && i >= 5 && i < len(writes)-(maxWrites-5) {
					continue
				}
				t.WriteString("\n  " + describeWrite(w))
			}
		}
		b.add(Item{ID: fmt.Sprintf("watch:%d", wp.ID), Kind: "watch", Text: t.String(), Priority: prioWatch})
	}
}

// describeWrite renders one write of a history: "3. event #123, thread 7:
// 0x0 -> 0x4052e0 by main at corrupt.c:33".
func describeWrite(w debugger.HistoryWrite) string {
	s := fmt.Sprintf("%d. at #%d, thread %d: %s -> %s", w.Index, w.Event, w.Thread, w.Old, w.New)
	if w.Syscall {
		return s + " by a system call"
	}
	if w.Function != "" {
		s += " by " + w.Function
	} else {
		s += " at pc " + w.PC
	}
	if w.File != "" {
		s += fmt.Sprintf(" at %s:%d", filepath.Base(w.File), w.Line)
	}
	return s
}

// sizeType is the C type of a raw watch of n bytes.
func sizeType(n int) string {
	switch n {
	case 1:
		return "char"
	case 2:
		return "short"
	case 4:
		return "int"
	}
	return "long"
}

// events adds one item per recorded event around the current moment.
func (b *builder) events(events []debugger.EventInfo) {
	now := b.sn.Event
	for _, e := range events {
		var t strings.Builder
		fmt.Fprintf(&t, "#%d thread %d +%.6fs %s: %s", e.Event, e.Thread, e.Time, e.Type, e.Text)
		if e.Type == "signal" {
			fmt.Fprintf(&t, " (%s)", signalDetails(e))
		}
		// At moment #N the events before N have happened and N is next.
		d := now - e.Event
		switch {
		case d == 0:
			t.WriteString(" (next: not yet happened at the current moment)")
		case d < 0:
			t.WriteString(" (later: not yet happened)")
		}
		dist := d
		if dist < 0 {
			dist = -dist
		}
		prio := prioFarEvent - int(min(dist, 99))
		switch {
		case d >= 1 && d <= pinnedEvents:
			prio = Pinned
		case dist <= nearEvents:
			prio = prioNearEvent - int(dist)
		}
		b.add(Item{ID: fmt.Sprintf("ev:%d", e.Event), Kind: "event", Text: t.String(), Priority: prio})
	}
}

// registers adds the general registers of frame 0: the outer frames'
// are mostly not saved, and a fault's operands are frame 0's.
func (b *builder) registers() {
	if len(b.sn0.Registers) == 0 || b.sn0.Selected != 0 {
		return
	}
	var t strings.Builder
	t.WriteString("registers of frame 0:")
	for i, r := range b.sn0.Registers {
		if i%4 == 0 {
			t.WriteString("\n")
		} else {
			t.WriteString("  ")
		}
		fmt.Fprintf(&t, "%s %s", r.Name, r.Value)
		if r.Flags != "" {
			t.WriteString(" " + r.Flags)
		}
	}
	b.add(Item{ID: "regs", Kind: "registers", Text: t.String(), Priority: prioRegisters})
}

// code adds the instructions around frame 0's pc: which one faulted, and
// with which registers.
func (b *builder) code() {
	d := b.sn0.Disasm
	cur := -1
	for i, l := range d {
		if l.Current {
			cur = i
		}
	}
	if cur < 0 || b.sn0.Selected != 0 {
		return
	}
	var t strings.Builder
	t.WriteString("instructions around frame 0's pc, \"=>\" marks it:")
	for _, l := range d[max(0, cur-codeBefore):min(len(d), cur+codeAfter+1)] {
		mark := "  "
		if l.Current {
			mark = "=>"
		}
		sym := ""
		if l.Symbol != "" {
			sym = " <" + l.Symbol + ">"
		}
		fmt.Fprintf(&t, "\n%s %#x%s  %s", mark, l.Addr, sym, l.Text)
	}
	b.add(Item{ID: "asm", Kind: "code", Text: t.String(), Priority: prioCode})
}

// program adds what was recorded: the program, its arguments, its
// directory, and the names of its environment variables — their values
// are left out, secrets or not, as they are rarely the bug and often
// private.
func (b *builder) program() {
	hdr := b.s.Header()
	if hdr == nil {
		return
	}
	var t strings.Builder
	fmt.Fprintf(&t, "program %s", hdr.Program)
	var args []string
	for _, a := range hdr.Args {
		args = append(args, strconv.Quote(a))
	}
	fmt.Fprintf(&t, "\nargs [%s]", strings.Join(args, ", "))
	fmt.Fprintf(&t, "\ncwd %s", hdr.Cwd)
	var names []string
	for _, kv := range hdr.Env {
		name, _, _ := strings.Cut(kv, "=")
		names = append(names, name)
	}
	sort.Strings(names)
	fmt.Fprintf(&t, "\nenvironment variables (names only): %s", strings.Join(names, " "))
	if hdr.Kernel != "" {
		fmt.Fprintf(&t, "\nrecorded on Linux %s", hdr.Kernel)
	}
	b.add(Item{ID: "program", Kind: "program", Text: t.String(), Priority: prioProgram})
}

// clip cuts a text to n bytes at a line or rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	if i := strings.LastIndexByte(s[:n], '\n'); i > n/2 {
		cut = i
	}
	for cut > 0 && cut < len(s) && s[cut]&0xc0 == 0x80 {
		cut--
	}
	return s[:cut] + "\n… (cut)"
}

// fit drops the least relevant items until the rendered window is within
// budget tokens or only pinned items are left.
func (w *Window) fit(budget int) {
	order := make([]int, len(w.Items))
	for i := range order {
		order[i] = i
	}
	// Lowest priority first; among equals, the later item (farther from
	// the top of the window) first.
	sort.SliceStable(order, func(a, b int) bool {
		pa, pb := w.Items[order[a]].Priority, w.Items[order[b]].Priority
		if pa != pb {
			return pa < pb
		}
		return order[a] > order[b]
	})
	dropped := map[int]bool{}
	size := func() int {
		n := len(w.header(len(dropped))) + len("\n") // Render's final newline
		for i, it := range w.Items {
			if !dropped[i] {
				n += itemSize(it)
			}
		}
		return n
	}
	n := size()
	for _, i := range order {
		if tokens(n) <= budget || w.Items[i].Priority >= Pinned {
			break
		}
		dropped[i] = true
		w.Omitted = append(w.Omitted, w.Items[i].ID)
		n = size()
	}
	kept := w.Items[:0]
	for i, it := range w.Items {
		if !dropped[i] {
			kept = append(kept, it)
		}
	}
	w.Items = kept
	w.Bytes = len(w.Render())
	w.Tokens = tokens(w.Bytes)
}

// tokens estimates the tokens of n bytes.
func tokens(n int) int { return (n + bytesPerToken - 1) / bytesPerToken }

// itemSize is the bytes an item takes in Render.
func itemSize(it Item) int { return len(it.ID) + 3 + len(it.Text) + 1 }

// header explains the window to the model.
func (w *Window) header(omitted int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Evidence from a recorded run of %d events, replayed at moment %s. ", w.total, w.moment)
	b.WriteString("A moment #N is a point between recorded events: the events before N have happened, event N is next " +
		"(\"#N write K to ADDR\" and \"#N hit K of PC\" are points within the run towards event N).\n")
	b.WriteString("Each item starts with its id in brackets: [stop] where the program stopped; " +
		"[frame:N] frame N of the backtrace (0 is the innermost) with its arguments; " +
		"[src:frame:N] the source around frame N's line, marked \"=>\"; [locals:frame:N] its variables; " +
		"[watch:N] every write to watchpoint N over the whole recording; " +
		"[ev:N] recorded event N (system calls, signals, thread and process events, nondeterministic instructions); " +
		"[regs] registers and [asm] instructions at frame 0; [program] the recorded program.\n")
	b.WriteString("Cite the evidence you use by its id, e.g. [ev:1234], [frame:0], [watch:1], and source lines as file.c:15. " +
		"Secrets were replaced by [REDACTED].\n")
	if omitted > 0 {
		fmt.Fprintf(&b, "%d less relevant items were left out for space.\n", omitted)
	}
	return b.String()
}

// Render formats the window for a prompt: a header explaining the ids and
// asking the model to cite them, then each item as "[ID] text".
func (w *Window) Render() string {
	var b strings.Builder
	b.WriteString(w.header(len(w.Omitted)))
	for _, it := range w.Items {
		b.WriteString("\n[" + it.ID + "] " + it.Text)
	}
	b.WriteString("\n")
	return b.String()
}

// Has says whether the window holds an item with this id, or, for
// "src:FILE:LINE", shows that source line (FILE compared by base name).
func (w *Window) Has(id string) bool {
	if w == nil {
		return false
	}
	for _, it := range w.Items {
		if it.ID == id {
			return true
		}
	}
	if rest, ok := strings.CutPrefix(id, "src:"); ok && !strings.HasPrefix(rest, "frame:") {
		i := strings.LastIndexByte(rest, ':')
		if i < 0 {
			return false
		}
		line, err := strconv.Atoi(rest[i+1:])
		if err != nil {
			return false
		}
		return w.hasLine(rest[:i], line)
	}
	return false
}

// hasLine says whether file:line is in the window: within a source item,
// or named in any item's text (a frame, the stop, a write of a history).
func (w *Window) hasLine(file string, line int) bool {
	file = filepath.Base(file)
	for _, it := range w.Items {
		if it.file == file && line >= it.first && line <= it.last {
			return true
		}
	}
	for _, it := range w.Items {
		for _, m := range fileLineRe().FindAllStringSubmatch(it.Text, -1) {
			if filepath.Base(m[1]) == file && m[2] == strconv.Itoa(line) {
				return true
			}
		}
	}
	return false
}
