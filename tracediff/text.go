package tracediff

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// sideBySideWidth is the narrowest terminal that shows the two sides of
// the divergence next to each other; narrower ones get one above the other.
const sideBySideWidth = 120

// Render writes the report for people: the recordings, the first
// divergence with each side's event, stack and source line (side by side
// when width allows), then the summary of what differs.
func Render(w io.Writer, r *Report, width int) {
	fmt.Fprintf(w, "A: %s (%s, %d events)\n", r.A.Trace, r.A.Program, r.A.Events)
	fmt.Fprintf(w, "B: %s (%s, %d events)\n", r.B.Trace, r.B.Program, r.B.Events)
	for _, n := range []string{r.A.Notice, r.B.Notice} {
		if n != "" {
			fmt.Fprintf(w, "note: %s\n", n)
		}
	}
	if r.Same {
		fmt.Fprintln(w, "no difference: the recordings make the same calls with the same results")
		renderExpected(w, r.Expected)
		return
	}
	d := r.First
	fmt.Fprintf(w, "\nFirst difference (%s), process %d thread %d: %s\n\n", d.Category, d.Process, d.Thread, d.What)
	la, lb := SideLines("A", d.A), SideLines("B", d.B)
	if width >= sideBySideWidth {
		col := (width - 3) / 2
		for i := range max(len(la), len(lb)) {
			fmt.Fprintf(w, "%s │ %s\n", pad(line(la, i), col), clip(line(lb, i), col))
		}
	} else {
		for _, l := range la {
			fmt.Fprintln(w, l)
		}
		fmt.Fprintln(w)
		for _, l := range lb {
			fmt.Fprintln(w, l)
		}
	}
	fmt.Fprintln(w, "\nWhat differs (first in B's order):")
	for _, x := range r.Differences {
		fmt.Fprintf(w, "  %-10s %-16s %5d  first %s\n", x.Category, x.Name, x.Count, firstEvents(x))
	}
	renderExpected(w, r.Expected)
}

// renderExpected says what differs in any two runs and was not counted.
func renderExpected(w io.Writer, list []Difference) {
	if len(list) == 0 {
		return
	}
	var parts []string
	for _, x := range list {
		parts = append(parts, fmt.Sprintf("%d %s (%s)", x.Count, x.Name, x.Category))
	}
	fmt.Fprintf(w, "Not counted, as in any two runs: %s\n", strings.Join(parts, ", "))
}

// firstEvents names the first events of a summary line.
func firstEvents(x Difference) string {
	ev := func(n int64) string {
		if n < 0 {
			return "-"
		}
		return fmt.Sprintf("#%d", n)
	}
	return fmt.Sprintf("A %s, B %s", ev(x.FirstA), ev(x.FirstB))
}

// SideLines renders one side of a divergence: its event, its source line
// and its stack, one string a line (the UI shows them too).
func SideLines(label string, s *Side) []string {
	if s == nil {
		return []string{label + ": -"}
	}
	var out []string
	switch {
	case s.Missing && s.Event >= 0:
		out = append(out, fmt.Sprintf("%s: not there; the thread's next event is #%d", label, s.Event), "   "+s.Text)
	case s.Missing:
		out = append(out, label+": not there (the thread has no more events)")
	default:
		out = append(out, fmt.Sprintf("%s #%d  %s", label, s.Event, s.Text))
	}
	out = append(out, fmt.Sprintf("   process %d (%s), thread %d", s.Pid, s.Process, s.Thread))
	if s.File != "" {
		out = append(out, fmt.Sprintf("   at %s:%d in %s", s.File, s.Line, s.Function))
	}
	for i, f := range s.Stack {
		fn := f.Function
		if fn == "" {
			fn = "??"
		}
		at := ""
		if f.File != "" {
			at = fmt.Sprintf(" at %s:%d", f.File, f.Line)
		}
		mark := ""
		if f.Scanned {
			mark = " (return address found on the stack)"
		}
		out = append(out, fmt.Sprintf("   #%-2d %s %s%s%s", i, f.PC, fn, at, mark))
	}
	if s.StackError != "" {
		out = append(out, "   (no stack: "+s.StackError+")")
	}
	return out
}

// line is lines[i], or "".
func line(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return ""
}

// clip cuts s to n columns.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:max(0, n-1)]) + "…"
}

// pad clips s to n columns and fills it up to n.
func pad(s string, n int) string {
	s = clip(s, n)
	return s + strings.Repeat(" ", max(0, n-utf8.RuneCountInString(s)))
}
