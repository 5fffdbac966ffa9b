package dwarf

// This file renders values the way each language's debugger does, so a
// user reads what they are used to: gdb for C and C++ (format_c.go, with
// the libstdc++ pretty printers' std::string and std::vector), Rust's
// Debug notation as rust-gdb's printers approximate it (format_rust.go),
// and delve for Go (format_go.go, gomap.go). Walking values for trees and
// for the expression evaluator is in navigate.go, field.go and
// container.go.

import (
	"errors"
	"fmt"
)

// FormatOptions select gdb's print formats.
type FormatOptions struct {
	// Format is gdb's /FMT letter: 0 for the natural format, or 'x', 'd',
	// 'u', 'o', 't', 'c', 'a', 'z'.
	Format byte
	// MaxElements caps the elements of arrays, slices, vectors and maps
	// shown (0: 200, gdb's "print elements").
	MaxElements int
	// MaxDepth caps nesting: gdb's "print max-depth" for C, C++ and Rust
	// (0: 20), delve's MaxVariableRecurse for Go (0: 1).
	MaxDepth int
	// MaxString caps the characters of a string shown (0: MaxElements).
	MaxString int
	// TypePrefix adds the type gdb's print puts before a top-level
	// pointer, reference or function ("(int *) 0x4052a0 <arr>").
	TypePrefix bool
}

func (o FormatOptions) elements() int {
	if o.MaxElements > 0 {
		return o.MaxElements
	}
	return 200
}

func (o FormatOptions) stringLimit() int {
	if o.MaxString > 0 {
		return o.MaxString
	}
	return o.elements()
}

// gdb collapses a run of more than this many equal elements into
// "<repeats N times>" (its "print repeats").
const repeatThreshold = 10

// errText renders an error in a value the way gdb does.
func errText(err error) string {
	var me *MemoryError
	if errors.As(err, &me) {
		return "<error: " + me.Error() + ">"
	}
	return "<error: " + err.Error() + ">"
}

// formatter holds what one rendering needs.
type formatter struct {
	t    *Table
	mem  Memory
	opts FormatOptions
}

func (t *Table) newFormatter(mem Memory, opts FormatOptions) *formatter {
	return &formatter{t: t, mem: newPageCache(mem), opts: opts}
}

// Format renders a value the way gdb does for C and C++, rust-gdb (Debug
// notation) for Rust and delve for Go. Unreadable memory shows as gdb's
// "<error: Cannot access memory at address 0x...>", a variable the
// compiler dropped as "<optimized out>".
func (t *Table) Format(v Value, mem Memory, opts FormatOptions) string {
	f := t.newFormatter(mem, opts)
	if v.Optimized {
		return "<optimized out>"
	}
	if v.Type == nil {
		if v.Err != nil {
			return errText(v.Err)
		}
		return "<error: value has no type>"
	}
	switch v.Type.Lang {
	case LangGo:
		return f.goValue(v, goFlags{top: true, withType: true}, 0)
	case LangRust:
		// As gdb's print: a pointer with its type, a function as C's.
		switch r := stripType(v.Type); {
		case v.Err != nil || v.Optimized:
		case (r.Kind == KindPointer || r.Kind == KindReference) && f.opts.TypePrefix && f.opts.Format == 0:
			return "(" + v.Type.Name + ") " + f.rustValue(v, 0)
		case r.Kind == KindFunc && v.InMem:
			return f.cTop(v)
		}
		return f.rustValue(v, 0)
	}
	return f.cTop(v)
}

// symbolize names the symbol an address falls in ("sum", "arr+8"), "" when
// none does.
func (f *formatter) symbolize(addr uint64) string {
	if f.t == nil || addr == 0 {
		return ""
	}
	name, off, ok := f.t.SymbolAt(addr)
	if !ok {
		return ""
	}
	if off == 0 {
		return name
	}
	return fmt.Sprintf("%s+%d", name, off)
}

// seq is Sequence for a value the caller takes for a sequence; notOne
// words the error, with the type's name, when it is none.
func (f *formatter) seq(v Value, notOne string) (Seq, error) {
	s, ok, err := Sequence(v, f.mem, f.t.typeLookup)
	if err == nil && (!ok || s.Array != nil || s.Elem == nil) {
		err = fmt.Errorf(notOne, v.Type.Name)
	}
	return s, err
}
