package views

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/keymaps"
)

// Locals shows the arguments and then the local variables of the selected
// frame as a tree, "name = value", whose structs, arrays and pointees
// expand; Watch sets a watchpoint on the variable or field under the
// cursor.
type Locals struct {
	ctx  *Context
	w, h int
	args []debugger.VarNode
	vars []debugger.VarNode
	// expanded is keyed by the names along a node's path, so that a
	// struct opened at one stop is still open at the next, where the
	// snapshot has new VarNode values for the same variables.
	expanded map[string]bool
	rows     []localsRow
	cur      paneCursor
	// snap is the moment shown, for the hint of an empty pane.
	snap *debugger.Snapshot
}

// localsRow is one visible line of the tree.
type localsRow struct {
	node  *debugger.VarNode
	key   string
	expr  string // the C-like expression of the node, for "watch -l"
	depth int
}

// NewLocals returns an empty Locals pane.
func NewLocals(ctx *Context) *Locals { return &Locals{ctx: ctx, expanded: map[string]bool{}} }

// Title names the pane.
func (l *Locals) Title() string { return "Locals" }

// SetSize sets the inner size.
func (l *Locals) SetSize(w, h int) {
	l.w, l.h = w, h
	l.cur.fix(len(l.rows), l.h)
}

// SetSnapshot shows the variables of a new moment, keeping what was
// expanded and the cursor on the same variable when it is still there.
func (l *Locals) SetSnapshot(sn *debugger.Snapshot) {
	l.args, l.vars, l.snap = nil, nil, sn
	if sn != nil {
		l.args, l.vars = sn.Args, sn.Locals
	}
	l.rebuild()
}

// rebuild flattens the tree into rows, keeping the cursor's variable.
func (l *Locals) rebuild() {
	key := ""
	if l.cur.pos < len(l.rows) {
		key = l.rows[l.cur.pos].key
	}
	l.rows = l.rows[:0]
	l.flatten("arg", l.args, 0, "", "", "")
	l.flatten("local", l.vars, 0, "", "", "")
	for i, r := range l.rows {
		if r.key == key {
			l.cur.pos = i
			break
		}
	}
	l.cur.fix(len(l.rows), l.h)
}

// flatten appends the rows of nodes. parent is the expression of the
// enclosing node; when that node is a pointee ("*"), ptr is the pointer's
// expression, so that its fields read "p->next" rather than "(*(p)).next".
func (l *Locals) flatten(prefix string, nodes []debugger.VarNode, depth int, parent, parentName, ptr string) {
	for i := range nodes {
		n := &nodes[i]
		key := prefix + "\x00" + n.Name
		expr := n.Name
		if depth > 0 {
			expr = localsChildExpr(parent, parentName, ptr, n.Name)
		}
		l.rows = append(l.rows, localsRow{node: n, key: key, expr: expr, depth: depth})
		if len(n.Children) > 0 && l.expanded[key] {
			l.flatten(key, n.Children, depth+1, expr, n.Name, parent)
		}
	}
}

// localsChildExpr builds the expression of a child from its parent's, following
// the names dwarf.Children gives: "[i]" for an element, "*" for the
// pointee, "<Base>" for a C++ base class, a field name, or (Go maps) the
// formatted key.
func localsChildExpr(parent, parentName, ptr, name string) string {
	switch {
	case name == "*":
		return "*(" + parent + ")"
	case strings.HasPrefix(name, "[") && strings.HasSuffix(name, "]"):
		return localsOperand(parent) + name
	case strings.HasPrefix(name, "<") && strings.HasSuffix(name, ">"):
		// A base class is a part of the object at its start, not a member
		// with a name: its members are the object's own.
		return parent
	case localsIsIdent(name):
		if parentName == "*" && ptr != "" {
			return localsOperand(ptr) + "->" + name
		}
		return localsOperand(parent) + "." + name
	}
	return localsOperand(parent) + "[" + name + "]"
}

// localsOperand parenthesises an expression that a postfix operator would
// otherwise bind into: "*(p)" followed by "[0]" must be "(*(p))[0]".
func localsOperand(e string) string {
	if strings.HasPrefix(e, "*") || strings.HasPrefix(e, "&") {
		return "(" + e + ")"
	}
	return e
}

func localsIsIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// Update moves the cursor, expands and collapses, and turns Watch into a
// command.
func (l *Locals) Update(msg tea.Msg) tea.Cmd {
	return l.cur.listKey(msg, l.ctx.Keys, len(l.rows), l.h, l.act)
}

// act does what a key other than navigation asks of the row under the
// cursor.
func (l *Locals) act(ks string) tea.Cmd {
	keys := l.ctx.Keys
	r := l.rows[l.cur.pos]
	open := len(r.node.Children) > 0 && l.expanded[r.key]
	switch {
	case keys.Matches(ks, keymaps.Expand):
		if len(r.node.Children) > 0 {
			l.setExpanded(r.key, !open)
		}
	case keys.Matches(ks, keymaps.Right):
		// As in file-tree views: Right opens, then enters.
		if len(r.node.Children) > 0 && !open {
			l.setExpanded(r.key, true)
		} else if open {
			l.cur.pos++
			l.cur.fix(len(l.rows), l.h)
		}
	case keys.Matches(ks, keymaps.Left):
		// Left closes, then goes to the parent.
		if open {
			l.setExpanded(r.key, false)
		} else if r.depth > 0 {
			for i := l.cur.pos - 1; i >= 0; i-- {
				if l.rows[i].depth == r.depth-1 {
					l.cur.pos = i
					break
				}
			}
			l.cur.fix(len(l.rows), l.h)
		}
	case keys.Matches(ks, keymaps.Watch):
		return paneRun("watch -l " + r.expr)
	}
	return nil
}

func (l *Locals) setExpanded(key string, on bool) {
	if on {
		l.expanded[key] = true
	} else {
		delete(l.expanded, key)
	}
	l.rebuild()
}

// Selected returns the expression of the variable under the cursor ("" when
// there is none), for the root's commands that act on it (print, x).
func (l *Locals) Selected() string {
	if l.cur.pos < len(l.rows) {
		return l.rows[l.cur.pos].expr
	}
	return ""
}

// hint tells a frame without debug information (the loader, a library:
// nothing to show, go elsewhere) from a function without variables.
func (l *Locals) hint() string {
	t, c := l.ctx.Theme, l.ctx
	fn := frameName(l.snap)
	switch {
	case l.snap == nil || len(l.snap.Frames) == 0:
		return paneHint(t.Muted, l.w, l.h, "no frame at this moment")
	case l.snap.Source == nil:
		what := "no debug information for this frame"
		if fn != "" {
			what = "no debug information for " + fn
		}
		return paneHint(t.Muted, l.w, l.h, what, fmt.Sprintf("%sbreak main then %s, or %s to the caller", keyFor(c, keymaps.Prompt), keyFor(c, keymaps.Continue), keyFor(c, keymaps.Finish)))
	}
	return paneHint(t.Muted, l.w, l.h, "no arguments or locals in "+fn, fmt.Sprintf("%sprint EXPR for globals", keyFor(c, keymaps.Prompt)))
}

// View renders the visible rows.
func (l *Locals) View() string {
	t := l.ctx.Theme
	if len(l.rows) == 0 {
		return l.hint()
	}
	closed, open := "▸", "▾"
	if t.NoColor {
		closed, open = "+", "-"
	}
	var out []string
	for i := l.cur.top; i < len(l.rows) && len(out) < l.h; i++ {
		r := l.rows[i]
		row, name, eq, val := lipgloss.NewStyle(), t.Base, t.Muted, t.Base
		if i == l.cur.pos {
			row, name, eq, val = t.Selected, t.Selected, t.Selected, t.Selected
		}
		mark := " "
		if len(r.node.Children) > 0 {
			mark = closed
			if l.expanded[r.key] {
				mark = open
			}
		}
		out = append(out, paneRow(l.w, row,
			paneSeg{strings.Repeat("  ", r.depth) + mark + " ", eq},
			paneSeg{paneText(r.node.Name), name},
			paneSeg{" = ", eq},
			paneSeg{paneText(r.node.Value), val}))
	}
	return paneBlock(out, l.w, l.h)
}

// Help lists the pane's keys.
func (l *Locals) Help() []keymaps.Action {
	return []keymaps.Action{keymaps.Up, keymaps.Down, keymaps.PageUp, keymaps.PageDown, keymaps.Expand,
		keymaps.Left, keymaps.Right, keymaps.Watch}
}
