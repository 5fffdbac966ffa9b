package debugger

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/rewind-debugger/rewind/dwarf"
	"github.com/rewind-debugger/rewind/engine/timeline"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// abortFailure is SIGABRT: a failed assert (the chain starts with the
// asserted expression's first variable) or a plain abort.
func (s *Session) abortFailure(fe *failureEvents) (*failure, *whyCursor, error) {
	if err := s.tl.Goto(s.tl.End()); err != nil {
		return nil, nil, err
	}
	end := s.tl.Now()
	var entries []uint64
	for _, sym := range s.symbols().LookupAll("__assert_fail") {
		if sym.Func && sym.Addr != 0 {
			entries = append(entries, sym.Addr)
		}
	}
	f := &failure{WhyFailure: WhyFailure{Kind: "abort", Description: "abort() called"}}
	if len(entries) > 0 {
		st, err := s.tl.ReverseContinueWith(entries, nil)
		if err == nil && st.Reason != timeline.ReasonStart {
			return s.assertFailure(f, st.Moment.Tid)
		}
		if err := s.tl.Goto(end); err != nil {
			return nil, nil, err
		}
	}
	s.failureAt(f, end.Tid)
	f.Description = fmt.Sprintf("abort() called at %s", placeWhere(f.Place))
	if msg := strings.TrimSpace(fe.stderrAll); msg != "" {
		f.Description += fmt.Sprintf(" after writing to stderr: %q", failureText(msg))
		if cur := s.namedValue(end.Tid, msg); cur != nil {
			f.Description += fmt.Sprintf("; the message names %s = %s", cur.what, cur.value)
			return f, &cur.whyCursor, nil
		}
	}
	f.verdict = "The program aborted itself without an assertion: no value to follow (origin EXPR follows one you choose)."
	return f, nil, nil
}

// hexRE matches the addresses and values a runtime's message names.
var hexRE = regexp.MustCompile(`0x[0-9a-fA-F]{4,16}`)

// namedCursor is a variable whose value a failure message names.
type namedCursor struct {
	whyCursor
	value string
}

// namedValue finds, in the failing frame of thread tid (the first of the
// program's own), a variable holding a value the message names: a panic
// that prints the bad pointer (Rust's misaligned dereference, say) names
// the value to follow.
func (s *Session) namedValue(tid int32, msg string) *namedCursor {
	want := map[uint64]bool{}
	for _, h := range hexRE.FindAllString(msg, -1) {
		if v, err := strconv.ParseUint(h[2:], 16, 64); err == nil && v >= 0x1000 {
			want[v] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	level, _ := s.userFrame(tid)
	frames, err := s.stack(tid)
	if err != nil || level >= len(frames) {
		return nil
	}
	args, locals, err := s.symbols().FrameVariables(frames, level, s.mem())
	if err != nil {
		return nil
	}
	for _, v := range append(locals, args...) {
		if !v.InMem || v.Type == nil || v.Type.Size != 8 {
			continue
		}
		var b [8]byte
		if n, _ := s.mem().ReadAt(b[:], v.Addr); n < 8 {
			continue
		}
		if val := binary.LittleEndian.Uint64(b[:]); want[val] {
			return &namedCursor{whyCursor{reg: -1, addr: v.Addr, size: 8, what: v.Name, tid: tid}, fmt.Sprintf("%#x", val)}
		}
	}
	return nil
}

// assertFailure stands at __assert_fail's entry: its first argument is the
// asserted expression, whose variables are read in the caller's frame.
func (s *Session) assertFailure(f *failure, tid int32) (*failure, *whyCursor, error) {
	regs, err := s.tl.Session().Regs(tid)
	if err != nil {
		return nil, nil, err
	}
	raw, _, _ := dwarf.CString(s.mem(), regs[trace.RDI], 200)
	text := string(raw)
	f.Kind = "assert"
	f.Description = fmt.Sprintf("assertion `%s' failed", text)
	s.failureAt(f, tid)
	level, _ := s.userFrame(tid)
	f.Description += " at " + placeWhere(f.Place)
	s.frame = level
	defer func() { s.frame = 0 }()
	for _, name := range assertOperands(text) {
		wp, _, err := s.watchTarget(name, false)
		if err != nil {
			continue
		}
		val := ""
		if v, err := s.eval(name); err == nil {
			val = s.format(v, 0)
		}
		f.Description += fmt.Sprintf(", %s = %s", name, val)
		return f, &whyCursor{reg: -1, addr: wp.Addr, size: wp.Len, what: name, tid: tid}, nil
	}
	f.verdict = "The asserted expression names no variable in memory to follow."
	return f, nil, nil
}

// operandRE matches the lvalues of an expression: a name and its members.
var operandRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*(?:\s*(?:->|\.)\s*[A-Za-z_][A-Za-z0-9_]*|\[[^\]]*\])*`)

// quotedRE matches the string and character literals of an expression.
var quotedRE = regexp.MustCompile(`'(?:\\.|[^'])*'|"(?:\\.|[^"])*"`)

// assertOperands lists the lvalues of an asserted expression, calls and
// keywords left out.
func assertOperands(expr string) []string {
	expr = quotedRE.ReplaceAllStringFunc(expr, func(q string) string { return strings.Repeat(" ", len(q)) })
	var out []string
	for _, loc := range operandRE.FindAllStringIndex(expr, -1) {
		name := expr[loc[0]:loc[1]]
		if rest := strings.TrimSpace(expr[loc[1]:]); strings.HasPrefix(rest, "(") {
			continue
		}
		switch name {
		case "sizeof", "NULL", "nullptr", "true", "false":
			continue
		}
		out = append(out, name)
	}
	return out
}
