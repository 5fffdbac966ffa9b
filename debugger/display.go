package debugger

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/rewind-debugger/rewind/debugger/expr"
)

// display is an expression shown after each stop (gdb's display).
type display struct {
	id     int
	expr   string
	format string // "" (print), "x" (print/x), or an examine format "i", "4xw"...
	// function is the function the expression needs locals of ("" when
	// it reads globals only): as gdb's display block, it is shown only
	// when the selected frame is in it.
	function string
	disabled bool
}

// DisplayValue is one display shown after a stop, in JSON results.
type DisplayValue struct {
	ID     int    `json:"id"`
	Expr   string `json:"expr"`
	Format string `json:"format,omitempty"`
	Value  string `json:"value,omitempty"`
	Error  string `json:"error,omitempty"`
	// Text is gdb's rendering ("1: i = 3").
	Text string `json:"text"`
}

// examineDisplay says whether a display's format is one of x's (i, s, or
// a count or size letter): gdb shows those as x/FMT EXPR.
func examineDisplay(format string) bool {
	return strings.ContainsAny(format, "is") || strings.ContainsAny(format, "0123456789bhwg")
}

// cmdDisplay implements display (show them all now), display EXPR and
// display/FMT EXPR: the new display is shown at once.
func (s *Session) cmdDisplay(name, args string, res *Result) error {
	_, format, _ := strings.Cut(name, "/")
	if strings.TrimSpace(args) == "" {
		if format != "" {
			return errors.New("display needs an expression after its format")
		}
		s.showDisplays(res)
		return nil
	}
	if format != "" && !examineDisplay(format) {
		if len(format) != 1 || !strings.Contains("xducotaz", format) {
			return fmt.Errorf("Undefined output format %q.", format)
		}
	}
	if hasAssignment(args) {
		return errCannotChange(args)
	}
	d := &display{expr: strings.TrimSpace(args), format: format}
	if _, err := expr.Eval(d.expr, &scope{s: s}); err != nil {
		// Not an expression of globals alone: it belongs to the
		// selected function, as gdb's innermost block of the expression.
		if f, _, err := s.selectedFrame(); err == nil && f.Function != nil {
			d.function = f.Function.Name
		}
	}
	if !s.habits.killed {
		dv := s.displayValue(d)
		if dv.Error != "" && d.function == "" {
			return errors.New(dv.Error)
		}
	}
	s.habits.nextDisplay++
	d.id = s.habits.nextDisplay
	s.habits.displays = append(s.habits.displays, d)
	if !s.habits.killed {
		dv := s.displayValue(d)
		res.Displays = []DisplayValue{dv}
		res.Text = dv.Text
	}
	return nil
}

// inScope says whether a display can be shown at the selected frame.
func (s *Session) inScope(d *display) bool {
	if d.function == "" {
		return true
	}
	f, _, err := s.selectedFrame()
	return err == nil && f.Function != nil && f.Function.Name == d.function
}

// displayValue evaluates a display as gdb shows it.
func (s *Session) displayValue(d *display) DisplayValue {
	dv := DisplayValue{ID: d.id, Expr: d.expr, Format: d.format}
	var r Result
	var err error
	var head string
	if examineDisplay(d.format) {
		head = fmt.Sprintf("%d: x/%s %s", d.id, d.format, d.expr)
		err = s.cmdExamine("x/"+d.format, d.expr, &r)
		if err == nil {
			dv.Value = r.Text
			dv.Text = head + "\n" + r.Text
		}
	} else {
		name := "output"
		head = fmt.Sprintf("%d: %s", d.id, d.expr)
		if d.format != "" {
			name += "/" + d.format
			head = fmt.Sprintf("%d: /%s %s", d.id, d.format, d.expr)
		}
		err = s.cmdPrint(name, d.expr, &r)
		if err == nil {
			dv.Value = r.Text
			dv.Text = head + " = " + r.Text
		}
	}
	if err != nil {
		dv.Error = err.Error()
		dv.Text = head + " = <error: " + err.Error() + ">"
	}
	return dv
}

// showDisplays adds the enabled displays in scope to a result: after a
// stop, or for display without arguments.
func (s *Session) showDisplays(res *Result) {
	if s.habits.killed {
		return
	}
	var texts []string
	for _, d := range s.habits.displays {
		if d.disabled || !s.inScope(d) {
			continue
		}
		dv := s.displayValue(d)
		res.Displays = append(res.Displays, dv)
		texts = append(texts, dv.Text)
	}
	if len(texts) == 0 {
		return
	}
	if res.Text != "" {
		res.Text += "\n"
	}
	res.Text += strings.Join(texts, "\n")
}

// cmdUndisplay implements undisplay [N...] and delete display [N...].
func (s *Session) cmdUndisplay(args string, res *Result) error {
	if strings.TrimSpace(args) == "" {
		s.habits.displays = nil
		return nil
	}
	return s.eachDisplay(args, func(i int) {
		s.habits.displays = append(s.habits.displays[:i], s.habits.displays[i+1:]...)
	})
}

// cmdEnableDisplay implements enable display [N...] and disable display
// [N...]: a disabled display is kept, and not shown at stops.
func (s *Session) cmdEnableDisplay(on bool, args string, res *Result) error {
	if strings.TrimSpace(args) == "" {
		for _, d := range s.habits.displays {
			d.disabled = !on
		}
		return nil
	}
	return s.eachDisplay(args, func(i int) { s.habits.displays[i].disabled = !on })
}

// eachDisplay runs f on the index of each display numbered in args, in
// gdb's words when a number is bad or unknown.
func (s *Session) eachDisplay(args string, f func(i int)) error {
	for _, w := range strings.Fields(args) {
		id, err := strconv.Atoi(w)
		if err != nil {
			return fmt.Errorf("Arguments must be display numbers.")
		}
		found := false
		for i, d := range s.habits.displays {
			if d.id == id {
				f(i)
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("No display number %d.", id)
		}
	}
	return nil
}

// infoDisplay implements info display, in gdb's words.
func (s *Session) infoDisplay(res *Result) {
	if len(s.habits.displays) == 0 {
		res.Text = "There are no auto-display expressions now."
		res.Value = []DisplayItem{}
		return
	}
	var b strings.Builder
	b.WriteString("Auto-display expressions now in effect:\nNum Enb Expression")
	var list []DisplayItem
	for _, d := range s.habits.displays {
		enb := "y"
		if d.disabled {
			enb = "n"
		}
		shown := d.expr
		switch {
		case d.format == "i":
			shown = "/1bi " + d.expr
		case d.format != "":
			shown = "/" + d.format + " " + d.expr
		}
		fmt.Fprintf(&b, "\n%d:   %s  %s", d.id, enb, shown)
		if !s.habits.killed && !s.inScope(d) {
			b.WriteString(" (cannot be evaluated in the current context)")
		}
		list = append(list, DisplayItem{ID: d.id, Expr: d.expr, Format: d.format, Enabled: !d.disabled})
	}
	res.Text, res.Value = b.String(), list
}
