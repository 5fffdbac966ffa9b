package views

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/keymaps"
)

// Memory is a hex and ASCII dump of the memory at an address or
// expression, re-read at every stop so that the bytes written since the
// previous stop stand out. The pane never reads memory itself: it asks the
// root with RequestMemory and shows the MemoryLoaded answer.
type Memory struct {
	ctx  *Context
	w, h int
	snap *debugger.Snapshot

	expr string
	addr uint64
	data []byte
	err  error
	// prev is the dump of the same address at the previous moment, the
	// baseline of the "changed" marks; loadedAt is the moment of data.
	prev     []byte
	loadedAt string

	cur     paneCursor
	editing bool
	input   textinput.Model
}

// NewMemory returns an empty Memory pane that shows a hint until it is
// given an expression.
func NewMemory(ctx *Context) *Memory {
	in := textinput.New()
	in.Prompt = "x/ "
	in.Placeholder = "address or expression"
	t := ctx.Theme
	st := textinput.DefaultStyles(true)
	state := textinput.StyleState{Text: t.Base, Placeholder: t.Muted, Suggestion: t.Muted, Prompt: t.Prompt}
	st.Focused, st.Blurred = state, state
	// A still cursor: a blinking one needs a tick the root would have to
	// route to an unfocused pane.
	st.Cursor = textinput.CursorStyle{Color: t.P.Accent, Blink: false}
	in.SetStyles(st)
	return &Memory{ctx: ctx, input: in}
}

// Title names the pane.
func (m *Memory) Title() string { return "Memory" }

// SetSize sets the inner size.
func (m *Memory) SetSize(w, h int) {
	m.w, m.h = w, h
	m.input.SetWidth(max(w-lipgloss.Width(m.input.Prompt)-1, 1))
	m.cur.fix(m.rows(), m.dumpRows())
}

// SetSnapshot records the new moment; the root then calls Refresh to have
// the dump re-read there.
func (m *Memory) SetSnapshot(sn *debugger.Snapshot) { m.snap = sn }

// Refresh returns the request that re-reads the current expression (nil
// when there is none). The root calls it after SetSnapshot: the address
// of an expression like "p->buf" can change from one moment to the next,
// so the expression is evaluated again rather than the old address read.
func (m *Memory) Refresh() tea.Cmd { return m.request() }

// SetExpr shows the memory at an expression (the Console's "x" command,
// a pointer followed) and returns the request for it.
func (m *Memory) SetExpr(expr string) tea.Cmd {
	expr = strings.TrimSpace(expr)
	if expr != m.expr {
		// The old bytes are another place's: neither to show under the new
		// header while reading nor to compare with.
		m.data, m.prev, m.err, m.addr, m.loadedAt = nil, nil, nil, 0, ""
		m.cur = paneCursor{}
	}
	m.expr = expr
	m.editing = false
	m.input.Blur()
	return m.request()
}

// Expr is the expression shown.
func (m *Memory) Expr() string { return m.expr }

// Editing says whether the expression is being typed: the root must then
// send every key to the pane, or typing "s" in "x/ s" would step.
func (m *Memory) Editing() bool { return m.editing }

func (m *Memory) request() tea.Cmd {
	if m.expr == "" {
		return nil
	}
	req := RequestMemory{Expr: m.expr, Len: m.dumpRows() * 16}
	return func() tea.Msg { return req }
}

// dumpRows is the rows under the header line; before the first SetSize it
// is a screenful so that the first request is not a single row.
func (m *Memory) dumpRows() int {
	if m.h <= 0 {
		return 16
	}
	return max(m.h-1, 1)
}

// perRow is 16 bytes when "addr: 16 × xx  16 chars" fits, else 8.
func (m *Memory) perRow() int {
	if m.w >= 13+16*3+2+16 {
		return 16
	}
	return 8
}

func (m *Memory) rows() int {
	n := m.perRow()
	return (len(m.data) + n - 1) / n
}

// changed says whether byte i was written since the previous stop.
func (m *Memory) changed(i int) bool {
	return i < len(m.prev) && i < len(m.data) && m.prev[i] != m.data[i]
}

// paneMomentKey identifies the moment of a snapshot.
func paneMomentKey(sn *debugger.Snapshot) string {
	if sn == nil {
		return ""
	}
	return sn.Moment + "#" + strconv.FormatInt(sn.Event, 10)
}

// Update handles the answer to a request, the expression editor and the
// keys.
func (m *Memory) Update(msg tea.Msg) tea.Cmd {
	if ml, ok := msg.(MemoryLoaded); ok {
		m.loaded(ml)
		return nil
	}
	k, isKey := msg.(tea.KeyPressMsg)
	if m.editing {
		// Literal keys, not actions: the vim preset binds "o" to Enter,
		// which must stay a letter while typing.
		if isKey {
			switch k.String() {
			case "enter":
				if v := strings.TrimSpace(m.input.Value()); v != "" {
					return m.SetExpr(v)
				}
				m.stopEditing()
				return nil
			case "esc", "ctrl+c", "ctrl+g":
				m.stopEditing()
				return nil
			}
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		return cmd
	}
	if !isKey {
		return nil
	}
	ks, keys := k.String(), m.ctx.Keys
	switch {
	case keys.Matches(ks, keymaps.Filter):
		return m.startEditing()
	case keys.Matches(ks, keymaps.Enter):
		if m.expr == "" {
			return m.startEditing()
		}
		return m.request()
	case keys.Matches(ks, keymaps.Toggle):
		return m.follow()
	case m.cur.navigate(keys, ks, m.rows(), m.dumpRows()):
	}
	return nil
}

func (m *Memory) startEditing() tea.Cmd {
	m.editing = true
	m.input.SetValue(m.expr)
	m.input.CursorEnd()
	return m.input.Focus()
}

func (m *Memory) stopEditing() {
	m.editing = false
	m.input.Blur()
}

// follow reads the 8 bytes at the start of the cursor's row as an x86-64
// (little-endian) pointer and shows where it points.
func (m *Memory) follow() tea.Cmd {
	off := m.cur.pos * m.perRow()
	if m.err != nil || off+8 > len(m.data) {
		return nil
	}
	return m.SetExpr(fmt.Sprintf("%#x", binary.LittleEndian.Uint64(m.data[off:off+8])))
}

// loaded takes an answer. The baseline moves to the old bytes only when
// the moment changed: re-reading at the same moment (Enter, a resize) must
// keep showing what the last step wrote.
func (m *Memory) loaded(ml MemoryLoaded) {
	if ml.Expr != m.expr {
		return // the answer to an expression since replaced
	}
	now := paneMomentKey(m.snap)
	switch {
	case ml.Err != nil || len(m.data) == 0 || ml.Addr != m.addr:
		m.prev = nil
	case m.loadedAt != now:
		m.prev = m.data
	}
	if ml.Err != nil || ml.Addr != m.addr {
		m.cur = paneCursor{}
	}
	m.addr, m.data, m.err, m.loadedAt = ml.Addr, ml.Data, ml.Err, now
	if ml.Err != nil {
		m.data = nil
	}
	m.cur.fix(m.rows(), m.dumpRows())
}

// View renders the header (the expression, or the editor) and the dump.
func (m *Memory) View() string {
	t := m.ctx.Theme
	if m.expr == "" && !m.editing {
		k := "/"
		if ks := m.ctx.Keys.Get(keymaps.Filter).Keys(); len(ks) > 0 {
			k = ks[len(ks)-1]
		}
		return paneHint(t.Muted, m.w, m.h, "no address to show",
			k+" here types one: an address, a pointer or an expression (&total, p->buf)")
	}
	var out []string
	if m.editing {
		out = append(out, m.input.View())
	} else {
		segs := []paneSeg{{"x/ " + paneText(m.expr), t.Title}}
		if m.err == nil && m.data != nil {
			segs = append(segs, paneSeg{fmt.Sprintf(" = %#x", m.addr), t.Muted})
		}
		out = append(out, paneRow(m.w, lipgloss.NewStyle(), segs...))
	}
	switch {
	case m.err != nil:
		out = append(out, paneRow(m.w, lipgloss.NewStyle(), paneSeg{paneText(m.err.Error()), t.Error}))
	case m.data == nil:
		out = append(out, paneRow(m.w, lipgloss.NewStyle(), paneSeg{"reading…", t.Muted}))
	default:
		n := m.perRow()
		for r := m.cur.top; r < m.rows() && len(out) < m.h; r++ {
			out = append(out, m.dumpRow(r, n))
		}
	}
	return paneBlock(out, m.w, m.h)
}

// dumpRow renders "7ffc1a2b3c40: xx xx …  ascii". In NoColor a changed
// byte's leading space becomes "*", so the marker costs no width.
func (m *Memory) dumpRow(r, n int) string {
	t := m.ctx.Theme
	addrSt := t.LineNumber
	if r == m.cur.pos {
		addrSt = t.Selected
	}
	segs := []paneSeg{{fmt.Sprintf("%012x:", m.addr+uint64(r*n)), addrSt}}
	var ascii []paneSeg
	for j := 0; j < n; j++ {
		i := r*n + j
		if i >= len(m.data) {
			segs = append(segs, paneSeg{"   ", t.Base})
			ascii = append(ascii, paneSeg{" ", t.Base})
			continue
		}
		b := m.data[i]
		st, sep := t.Base, paneSeg{" ", t.Base}
		if b == 0 {
			st = t.Muted
		}
		if m.changed(i) {
			st = t.Changed
			if t.NoColor {
				sep = paneSeg{"*", st}
			}
		}
		c := "."
		if b >= 0x20 && b < 0x7f {
			c = string(rune(b))
		}
		segs = append(segs, sep, paneSeg{fmt.Sprintf("%02x", b), st})
		ascii = append(ascii, paneSeg{c, st})
	}
	segs = append(segs, paneSeg{"  ", t.Base})
	return paneRow(m.w, lipgloss.NewStyle(), append(segs, ascii...)...)
}

// Help lists the pane's keys.
func (m *Memory) Help() []keymaps.Action {
	return []keymaps.Action{keymaps.Filter, keymaps.Enter, keymaps.Toggle, keymaps.Up, keymaps.Down, keymaps.PageUp, keymaps.PageDown}
}
