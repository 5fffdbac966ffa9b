package views

import (
	"fmt"
	"strings"
)

// Valued is a pane that shows values a dataflow query (origin) can start
// from: OriginExpr is the expression of the one under the cursor, "" when
// there is none. The root runs `origin EXPR` on it with the Origin keys.
type Valued interface {
	OriginExpr() string
}

// OriginExpr is the variable under the cursor.
func (l *Locals) OriginExpr() string { return l.Selected() }

// OriginExpr is the 8-byte word at the start of the cursor's row.
func (m *Memory) OriginExpr() string {
	off := m.cur.pos * m.perRow()
	if m.err != nil || off+8 > len(m.data) {
		return ""
	}
	return fmt.Sprintf("*(long *)%#x", m.addr+uint64(off))
}

// OriginExpr is the expression of the watchpoint under the cursor.
func (p *Watch) OriginExpr() string {
	if p.cur.pos >= len(p.rows) || p.rows[p.cur.pos].watch >= len(p.watches) {
		return ""
	}
	return p.watches[p.rows[p.cur.pos].watch].Expr
}

// OriginExpr is the expression of the last successful print.
func (c *Console) OriginExpr() string {
	for i := len(c.entries) - 1; i >= 0; i-- {
		e := c.entries[i].e
		if e.Error {
			continue
		}
		name, arg, _ := strings.Cut(strings.TrimSpace(e.Command), " ")
		name, _, _ = strings.Cut(name, "/") // print/x
		if (name == "print" || name == "p" || name == "output") && strings.TrimSpace(arg) != "" {
			return strings.TrimSpace(arg)
		}
	}
	return ""
}
