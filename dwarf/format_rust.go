package dwarf

// Rust values in Debug notation, as rust-gdb's printers approximate it.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

func (f *formatter) rustValue(v Value, depth int) string {
	if v.Optimized {
		return "<optimized out>"
	}
	if v.Err != nil {
		return errText(v.Err)
	}
	r := stripType(v.Type)
	if depth > f.maxDepth() {
		return ".."
	}
	switch r.Kind {
	case KindBase:
		b, err := v.Contents(f.mem)
		if err != nil {
			return errText(err)
		}
		return f.rustBase(b, r)
	case KindEnum:
		b, err := v.Contents(f.mem)
		if err != nil {
			return errText(err)
		}
		x := int64(leUint(b))
		if isSignedEnc(r.Encoding) {
			x = signExtend(uint64(x), 8*len(b))
		}
		for _, e := range r.Enumerators {
			if e.Value == x {
				return e.Name
			}
		}
		return strconv.FormatInt(x, 10)
	case KindPointer, KindReference:
		// References, boxes and raw pointers alike are addresses, as gdb
		// prints them (`print *self` shows what a &mut self points to).
		s, _, _ := f.pointerText(v)
		return s
	case KindArray:
		if r.Count < 0 || r.Elem.Size <= 0 {
			return "[]"
		}
		var parts []string
		limit := int64(f.opts.elements())
		for i := int64(0); i < r.Count && i < limit; i++ {
			parts = append(parts, f.rustValue(subValue(v, "", r.Elem, i*r.Elem.Size), depth+1))
		}
		if r.Count > limit {
			parts = append(parts, "..")
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case KindStruct, KindUnion:
		return f.rustStruct(v, r, depth)
	case KindFunc:
		return fmt.Sprintf("%#x", v.Addr)
	}
	return "<unknown type " + v.Type.Name + ">"
}

func (f *formatter) rustBase(b []byte, r *Type) string {
	if f.opts.Format != 0 && r.Encoding != ATEFloat {
		return f.intText(b, isSignedEnc(r.Encoding), f.opts.Format)
	}
	switch r.Encoding {
	case ATEBoolean:
		if leUint(b) == 0 {
			return "false"
		}
		return "true"
	case ATEUTF:
		c := rune(leUint(b))
		if c == '"' {
			return `'"'`
		}
		return "'" + rustEscape(string(c), '\'') + "'"
	case ATEFloat:
		if len(b) == 4 {
			return rustFloat(float64(math.Float32frombits(uint32(leUint(b)))), 32)
		}
		return rustFloat(math.Float64frombits(leUint(b)), 64)
	}
	if len(b) == 0 {
		return "()"
	}
	return f.intText(b, isSignedEnc(r.Encoding), 0)
}

// rustFloat is Rust's Debug of a float: shortest round-trip digits, a ".0"
// on integral values, exponent form outside [1e-4, 1e16).
func rustFloat(x float64, bits int) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	a := math.Abs(x)
	if a != 0 && (a < 1e-4 || a >= 1e16) {
		s := strconv.FormatFloat(x, 'e', -1, bits)
		i := strings.IndexByte(s, 'e')
		exp := s[i+1:]
		neg := strings.HasPrefix(exp, "-")
		exp = strings.TrimLeft(exp, "+-0")
		if neg {
			exp = "-" + exp
		}
		return s[:i] + "e" + exp
	}
	s := strconv.FormatFloat(x, 'f', -1, bits)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// rustEscape is Rust's char::escape_debug for one string or char.
func rustEscape(s string, q byte) string {
	var sb strings.Builder
	for _, c := range s {
		switch {
		case c == '\\':
			sb.WriteString(`\\`)
		case c == rune(q):
			sb.WriteString(`\` + string(q))
		case c == '\n':
			sb.WriteString(`\n`)
		case c == '\r':
			sb.WriteString(`\r`)
		case c == '\t':
			sb.WriteString(`\t`)
		case c == 0:
			sb.WriteString(`\0`)
		case c == utf8.RuneError || !unicode.IsPrint(c) && c != ' ':
			fmt.Fprintf(&sb, `\u{%x}`, c)
		default:
			sb.WriteRune(c)
		}
	}
	return sb.String()
}

func rustQuote(b []byte, more bool) string {
	s := `"` + rustEscape(string(b), '"') + `"`
	if more {
		s += "..."
	}
	return s
}

// rustShortName is the name Debug prints for a type: its last path
// component without generic arguments ("alloc::vec::Vec<i32>" is "Vec").
func rustShortName(name string) string {
	depth, end := 0, len(name)
	for i := len(name) - 1; i >= 0; i-- {
		switch name[i] {
		case '>':
			depth++
		case '<':
			depth--
			if depth == 0 {
				end = i
			}
		case ':':
			if depth == 0 && i > 0 && name[i-1] == ':' {
				return name[i+1 : end]
			}
		}
	}
	return name[:end]
}

// rustSeq reads the data pointer, length and element type of a Vec, a
// String (its Vec<u8>), a slice &[T] or a &str (see Sequence).
func (f *formatter) rustSeq(v Value) (ptr uint64, n int64, el *Type, ok bool) {
	s, err := f.seq(v, "%s is not a sequence")
	return s.Data, s.Len, s.Elem, err == nil
}

func (f *formatter) rustStruct(v Value, r *Type, depth int) string {
	if r.Variants != nil {
		name, payload, ok := rustVariant(v, r, f.mem)
		if !ok {
			return "<invalid enum value>"
		}
		return f.rustFields(name, payload, stripType(payload.Type), depth)
	}
	name := r.Name
	isStr := name == "&str" || name == "&mut str" || name == "alloc::string::String"
	isVec := strings.HasPrefix(name, "alloc::vec::Vec<")
	isSlice := strings.HasPrefix(name, "&[") || strings.HasPrefix(name, "&mut [")
	if isStr || isVec || isSlice {
		if p, n, el, ok := f.rustSeq(v); ok {
			if isStr {
				limit := int64(f.opts.stringLimit())
				b, err := readMem(f.mem, p, min(n, limit))
				if err != nil {
					return errText(err)
				}
				return rustQuote(b, n > limit)
			}
			var parts []string
			limit := int64(f.opts.elements())
			for i := int64(0); i < n && i < limit && el.Size >= 0; i++ {
				parts = append(parts, f.rustValue(atAddr("", el, p+uint64(i*el.Size)), depth+1))
			}
			if n > limit {
				parts = append(parts, "..")
			}
			s := "[" + strings.Join(parts, ", ") + "]"
			if isVec {
				s = "vec!" + s
			}
			return s
		}
	}
	if strings.HasPrefix(name, "(") {
		var parts []string
		for _, fl := range r.Fields {
			parts = append(parts, f.rustValue(subValue(v, fl.Name, fl.Type, fl.Offset), depth+1))
		}
		if len(parts) == 1 {
			return "(" + parts[0] + ",)"
		}
		return "(" + strings.Join(parts, ", ") + ")"
	}
	return f.rustFields(rustShortName(name), v, r, depth)
}

// rustFields prints a struct or enum variant: "Point { x: 1, y: 2 }",
// "Some(5)" (tuple fields are named __0, __1...), "None".
func (f *formatter) rustFields(name string, v Value, r *Type, depth int) string {
	if len(r.Fields) == 0 {
		return name
	}
	tuple := true
	for i, fl := range r.Fields {
		if fl.Name != "__"+strconv.Itoa(i) {
			tuple = false
		}
	}
	var parts []string
	for _, fl := range r.Fields {
		text := f.rustValue(f.fieldValue(v, fl), depth+1)
		if tuple {
			parts = append(parts, text)
		} else {
			parts = append(parts, fl.Name+": "+text)
		}
	}
	if tuple {
		return name + "(" + strings.Join(parts, ", ") + ")"
	}
	return name + " { " + strings.Join(parts, ", ") + " }"
}

// rustVariant selects the active variant of a Rust enum: the one whose
// discriminant value the discriminant field holds, else the default one
// (which is how niche-encoded enums mark their dataful variant).
func rustVariant(v Value, r *Type, mem Memory) (string, Value, bool) {
	vp := r.Variants
	var chosen *Variant
	if vp.Discr != nil {
		dv := subValue(v, "discr", vp.Discr.Type, vp.Discr.Offset)
		d, err := uintValue(dv, mem)
		if err != nil {
			return "", Value{}, false
		}
		size := vp.Discr.Type.Size
		mask := ^uint64(0)
		if size > 0 && size < 8 {
			mask = 1<<(8*uint(size)) - 1
		}
		for i := range vp.Variants {
			if !vp.Variants[i].Default && uint64(vp.Variants[i].DiscrValue)&mask == d&mask {
				chosen = &vp.Variants[i]
				break
			}
		}
	}
	if chosen == nil {
		for i := range vp.Variants {
			if vp.Variants[i].Default {
				chosen = &vp.Variants[i]
				break
			}
		}
	}
	if chosen == nil && len(vp.Variants) == 1 {
		chosen = &vp.Variants[0]
	}
	if chosen == nil || chosen.Field.Type == nil {
		return "", Value{}, false
	}
	fl := chosen.Field
	return fl.Name, subValue(v, fl.Name, fl.Type, fl.Offset), true
}
