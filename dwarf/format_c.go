package dwarf

// C and C++ values, printed as gdb prints them, with the libstdc++
// pretty printers' std::string and std::vector.

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// cTop adds the parts gdb's print shows only for the value printed itself:
// the pointer type and the referenced value.
func (f *formatter) cTop(v Value) string {
	r := stripType(v.Type)
	if v.Err == nil && r != nil {
		switch r.Kind {
		case KindReference:
			addr, err := uintValue(v, f.mem)
			if err != nil {
				return errText(err)
			}
			s := fmt.Sprintf("@%#x: %s", addr, f.cValue(atAddr(v.Name, r.Elem, addr), 0))
			if f.opts.TypePrefix {
				s = "(" + v.Type.Name + ") " + s
			}
			return s
		case KindPointer:
			if f.opts.TypePrefix && f.opts.Format == 0 && !(v.Type.Kind == KindPointer && isPlainChar(v.Type.Elem)) {
				return "(" + v.Type.Name + ") " + f.cValue(v, 0)
			}
		case KindFunc:
			if v.InMem {
				return f.funcText(v)
			}
		}
	}
	return f.cValue(v, 0)
}

// funcText is gdb's rendering of a function: its type, its address and
// the symbol there.
func (f *formatter) funcText(v Value) string {
	s := fmt.Sprintf("%#x", v.Addr)
	if sym := f.symbolize(v.Addr); sym != "" {
		s += " <" + sym + ">"
	}
	return "{" + v.Type.Name + "} " + s
}

// isPlainChar is gdb's test for leaving the type off a string pointer: the
// pointee is named exactly "char" (qualifiers aside).
func isPlainChar(t *Type) bool {
	for t != nil && t.Kind == KindQualified {
		t = t.Elem
	}
	return t != nil && t.Kind == KindBase && t.Name == "char"
}

func (f *formatter) maxDepth() int {
	if f.opts.MaxDepth > 0 {
		return f.opts.MaxDepth
	}
	return 20
}

func (f *formatter) cValue(v Value, depth int) string {
	if v.Optimized {
		return "<optimized out>"
	}
	if v.Err != nil {
		return errText(v.Err)
	}
	if v.Synthetic != nil && f.opts.Format == 0 {
		// gdb names it; in a /FMT it is the zero it computes with.
		return "<synthetic pointer>"
	}
	r := stripType(v.Type)
	switch r.Kind {
	case KindStruct, KindUnion:
		if s, ok := f.cxxPretty(v, r, depth); ok {
			return s
		}
		if depth >= f.maxDepth() {
			return "{...}"
		}
		return f.cStruct(v, r, depth)
	case KindArray:
		return f.cArray(v, r, depth)
	case KindPointer:
		return f.cPointer(v, r)
	case KindReference:
		addr, err := uintValue(v, f.mem)
		if err != nil {
			return errText(err)
		}
		return fmt.Sprintf("@%#x", addr)
	case KindEnum:
		return f.cEnum(v, r)
	case KindBase:
		b, err := v.Contents(f.mem)
		if err != nil {
			return errText(err)
		}
		return f.cBase(b, r)
	case KindFunc:
		if v.InMem {
			return f.funcText(v)
		}
		return "<function>"
	case KindVoid:
		if r.Size == 8 { // decltype(nullptr)
			x, err := uintValue(v, f.mem)
			if err != nil {
				return errText(err)
			}
			return fmt.Sprintf("%#x", x)
		}
		return "void"
	}
	return "<unknown type " + v.Type.Name + ">"
}

// cBase renders an integer, character, boolean or floating value.
func (f *formatter) cBase(b []byte, r *Type) string {
	signed := isSignedEnc(r.Encoding)
	switch {
	case r.Encoding == ATEFloat && f.opts.Format == 0:
		return gdbFloat(b)
	case r.Encoding == ATEComplexFloat && f.opts.Format == 0:
		h := len(b) / 2
		return gdbFloat(b[:h]) + " + " + gdbFloat(b[h:]) + "i"
	case r.Encoding == ATEBoolean && f.opts.Format == 0:
		switch leUint(b) {
		case 0:
			return "false"
		case 1:
			return "true"
		}
		return strconv.FormatUint(leUint(b), 10)
	case (r.Encoding == ATESignedChar || r.Encoding == ATEUnsignedChar || r.Encoding == ATEUTF) && f.opts.Format == 0:
		return f.intText(b, signed, 0) + " " + charLiteral(leUint(b), len(b), r.Encoding == ATEUTF)
	}
	return f.intText(b, signed, f.opts.Format)
}

// intText formats an integer of any size in one of gdb's /FMT letters.
func (f *formatter) intText(b []byte, signed bool, format byte) string {
	if len(b) == 0 {
		return "0"
	}
	x := new(big.Int)
	for i := len(b) - 1; i >= 0; i-- {
		x.Lsh(x, 8)
		x.Or(x, big.NewInt(int64(b[i])))
	}
	bits := uint(8 * len(b))
	neg := func() *big.Int {
		if bits > 0 && x.Bit(int(bits-1)) == 1 {
			return new(big.Int).Sub(x, new(big.Int).Lsh(big.NewInt(1), bits))
		}
		return x
	}
	switch format {
	case 'x':
		return "0x" + x.Text(16)
	case 'z':
		s := x.Text(16)
		return "0x" + strings.Repeat("0", max(0, 2*len(b)-len(s))) + s
	case 'o':
		if x.Sign() == 0 {
			return "0"
		}
		return "0" + x.Text(8)
	case 't':
		return x.Text(2)
	case 'd':
		return neg().String()
	case 'u':
		return x.String()
	case 'c':
		// gdb casts to char: the low byte, signed when the value is.
		c := uint64(b[0])
		n := strconv.FormatUint(c, 10)
		if signed {
			n = strconv.Itoa(int(int8(b[0])))
		}
		return n + " " + charLiteral(c, 1, false)
	case 'a':
		s := "0x" + x.Text(16)
		if sym := f.symbolize(x.Uint64()); sym != "" {
			s += " <" + sym + ">"
		}
		return s
	}
	if signed {
		return neg().String()
	}
	return x.String()
}

// gdbFloat prints a float with gdb's %g precision: the digits the format
// can hold plus two (9 for float, 17 for double, 21 for x87 long double).
func gdbFloat(b []byte) string {
	switch len(b) {
	case 4:
		return cFloatText(float64(math.Float32frombits(uint32(leUint(b)))), 9, uint64(leUint(b))&0x7fffff, 32)
	case 8:
		x := leUint(b)
		return cFloatText(math.Float64frombits(x), 17, x&(1<<52-1), 64)
	case 10, 12, 16:
		// x87 extended precision: 64-bit mantissa with explicit integer
		// bit, 15-bit exponent, sign.
		mant := leUint(b[:8])
		se := uint16(b[8]) | uint16(b[9])<<8
		sign, exp := se>>15 == 1, int(se&0x7fff)
		if exp == 0x7fff {
			if mant<<1 == 0 {
				if sign {
					return "-inf"
				}
				return "inf"
			}
			s := fmt.Sprintf("nan(%#x)", mant&(1<<62-1))
			if sign {
				s = "-" + s
			}
			return s
		}
		bf := new(big.Float).SetPrec(64).SetUint64(mant)
		if exp == 0 {
			exp = 1
		}
		bf.SetMantExp(bf, exp-16383-63)
		if sign {
			bf.Neg(bf)
		}
		return trimG(bf.Text('g', 21))
	}
	return "<float of " + strconv.Itoa(len(b)) + " bytes>"
}

func cFloatText(x float64, digits int, mant uint64, bits int) string {
	switch {
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	case math.IsNaN(x):
		s := fmt.Sprintf("nan(%#x)", mant)
		if math.Signbit(x) {
			s = "-" + s
		}
		return s
	}
	return trimG(strconv.FormatFloat(x, 'g', digits, bits))
}

// trimG makes Go's %g output C's: "1e+20" stays, "1e+05" does too, but Go
// keeps trailing zeros of the mantissa that C's %g drops.
func trimG(s string) string {
	mant, exp := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, exp = s[:i], s[i:]
	}
	if strings.Contains(mant, ".") {
		mant = strings.TrimRight(mant, "0")
		mant = strings.TrimSuffix(mant, ".")
	}
	if exp != "" {
		// C writes at least two exponent digits.
		sign, digits := exp[1:2], strings.TrimLeft(exp[2:], "0")
		for len(digits) < 2 {
			digits = "0" + digits
		}
		exp = "e" + sign + digits
	}
	return mant + exp
}

// charLiteral is gdb's rendering of one character: 'A', '\n', '\310'.
func charLiteral(c uint64, size int, utf bool) string {
	prefix := ""
	if utf {
		switch size {
		case 2:
			prefix = "u"
		case 4:
			prefix = "U"
		}
	}
	if size == 1 || c < 0x80 {
		return prefix + "'" + gdbEscape(string([]byte{byte(c)}), '\'', c >= 0x80) + "'"
	}
	if utf8.ValidRune(rune(c)) && unicode.IsPrint(rune(c)) {
		return prefix + "'" + string(rune(c)) + "'"
	}
	return prefix + fmt.Sprintf("'\\%o'", c)
}

// gdbEscape escapes one character (a rune's bytes, or one byte that is not
// valid UTF-8 when raw) for a string quoted with q.
func gdbEscape(ch string, q byte, raw bool) string {
	if raw || len(ch) == 1 && ch[0] >= 0x80 {
		return octalBytes(ch)
	}
	if len(ch) == 1 {
		c := ch[0]
		if esc, ok := cEscapes[c]; ok {
			return esc
		}
		if c == q {
			return `\` + string(q)
		}
		if c < 0x20 || c == 0x7f {
			return fmt.Sprintf("\\%03o", c)
		}
		return ch
	}
	r, _ := utf8.DecodeRuneInString(ch)
	if !unicode.IsPrint(r) {
		return octalBytes(ch)
	}
	return ch
}

// cEscapes are the characters gdb writes as C escapes.
var cEscapes = map[byte]string{'\a': `\a`, '\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`, '\v': `\v`,
	033: `\033`, '\\': `\\`}

// octalBytes writes every byte of ch as a three-digit octal escape, as
// gdb writes bytes that are not printable characters.
func octalBytes(ch string) string {
	var sb strings.Builder
	for i := 0; i < len(ch); i++ {
		fmt.Fprintf(&sb, "\\%03o", ch[i])
	}
	return sb.String()
}

// gdbString renders bytes as gdb's generic_printstr does: quoted runs,
// runs of more than repeatThreshold equal characters as "'x' <repeats N
// times>", at most limit characters, and "..." when cut (or when more
// says the string goes on).
func gdbString(b []byte, limit int, more bool) string {
	if len(b) == 0 && !more {
		return `""`
	}
	// Split into characters: valid UTF-8 sequences, or single bytes.
	type group struct {
		ch   string
		raw  bool
		reps int
	}
	var groups []group
	consumed, i := 0, 0
	for i < len(b) && consumed < limit {
		r, n := utf8.DecodeRune(b[i:])
		raw := r == utf8.RuneError && n <= 1
		if raw {
			n = 1
		}
		ch := string(b[i : i+n])
		j := i + n
		reps := 1
		for j+n <= len(b) && string(b[j:j+n]) == ch {
			reps++
			j += n
		}
		groups = append(groups, group{ch, raw, reps})
		consumed += reps
		i = j
	}
	var sb strings.Builder
	inQuote := false
	for k, g := range groups {
		if g.reps > repeatThreshold {
			if inQuote {
				sb.WriteString(`"`)
				inQuote = false
			}
			if k > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "'%s' <repeats %d times>", gdbEscape(g.ch, '\'', g.raw), g.reps)
			continue
		}
		if !inQuote {
			if k > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(`"`)
			inQuote = true
		}
		e := gdbEscape(g.ch, '"', g.raw)
		for n := 0; n < g.reps; n++ {
			sb.WriteString(e)
		}
	}
	if inQuote {
		sb.WriteString(`"`)
	}
	if i < len(b) || more {
		sb.WriteString("...")
	}
	return sb.String()
}

// cString reads a NUL-terminated string at addr, at most limit bytes;
// more reports that it went on past the limit.
func (f *formatter) cString(addr uint64, limit int) (s []byte, more bool, err error) {
	return CString(f.mem, addr, limit)
}

// CString reads a NUL-terminated string at addr, at most limit bytes, in
// chunks that do not cross a page the string may not reach; more reports
// that it goes on past the limit. An error means not even its first byte
// could be read.
func CString(mem Memory, addr uint64, limit int) (s []byte, more bool, err error) {
	const chunk = 64
	for len(s) < limit {
		n := min(chunk, limit-len(s))
		// Do not let a chunk cross a page the string may not reach.
		a := addr + uint64(len(s))
		if rest := cachePage - int(a%cachePage); rest < n {
			n = rest
		}
		buf, err := readMem(mem, a, int64(n))
		if err != nil {
			if len(s) == 0 {
				return nil, false, err
			}
			return s, false, nil
		}
		if k := bytes.IndexByte(buf, 0); k >= 0 {
			return append(s, buf[:k]...), false, nil
		}
		s = append(s, buf...)
	}
	// At the limit: gdb shows "..." only when the string does go on.
	next, err := readMem(mem, addr+uint64(len(s)), 1)
	return s, err == nil && next[0] != 0, nil
}

// pointerText is a pointer as gdb prints it: its address with the symbol
// there (<fn+4>), or its bits in a print/FMT format; text says it is the
// address (true) rather than an error or the format's digits.
func (f *formatter) pointerText(v Value) (s string, addr uint64, text bool) {
	addr, err := uintValue(v, f.mem)
	if err != nil {
		return errText(err), 0, false
	}
	if f.opts.Format != 0 && f.opts.Format != 'a' && f.opts.Format != 's' {
		b, _ := v.Contents(f.mem)
		return f.intText(b, false, f.opts.Format), addr, false
	}
	s = fmt.Sprintf("%#x", addr)
	if sym := f.symbolize(addr); sym != "" {
		s += " <" + sym + ">"
	}
	return s, addr, true
}

func (f *formatter) cPointer(v Value, r *Type) string {
	s, addr, text := f.pointerText(v)
	if !text {
		return s
	}
	if addr != 0 && isCharType(r.Elem) {
		str, more, err := f.cString(addr, f.opts.stringLimit())
		if err != nil {
			return s + " " + errText(err)
		}
		s += " " + gdbString(str, f.opts.stringLimit(), more)
	}
	return s
}

func (f *formatter) cStruct(v Value, r *Type, depth int) string {
	if len(r.Fields) == 0 {
		if r.Size < 0 {
			// Declared only ("struct handle;"), its body nowhere in the
			// program's debug information: gdb's words.
			return "<incomplete type>"
		}
		return "{<No data fields>}"
	}
	parts := make([]string, 0, len(r.Fields))
	for _, fl := range r.Fields {
		fv := f.fieldValue(v, fl)
		text := f.cValue(fv, depth+1)
		switch {
		case fl.Base:
			parts = append(parts, "<"+fl.Type.Name+"> = "+text)
		case fl.Name == "":
			parts = append(parts, text) // anonymous struct or union member
		default:
			parts = append(parts, fl.Name+" = "+text)
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// fieldValue is fieldValue with the formatter's memory.
func (f *formatter) fieldValue(v Value, fl Field) Value {
	return fieldValue(v, fl, f.mem)
}

func (f *formatter) cArray(v Value, r *Type, depth int) string {
	if r.Count < 0 {
		// gdb shows an array of unknown bound by its address.
		if v.InMem {
			return fmt.Sprintf("%#x", v.Addr)
		}
		return "{}"
	}
	el := r.Elem
	if isCharType(el) && f.opts.Format == 0 {
		b, err := v.Contents(f.mem)
		if err != nil {
			return errText(err)
		}
		// gdb drops one trailing NUL of a char array ("print null-stop"
		// is off).
		if len(b) > 0 && b[len(b)-1] == 0 {
			b = b[:len(b)-1]
		}
		return gdbString(b, f.opts.stringLimit(), false)
	}
	if r.Count == 0 || el.Size <= 0 {
		return "{}"
	}
	if depth >= f.maxDepth() {
		return "{...}"
	}
	limit := f.opts.elements()
	elems := func(i int64) Value { return subValue(v, fmt.Sprintf("[%d]", i), el, i*el.Size) }
	raw := func(i int64) []byte {
		b, err := elems(i).Contents(f.mem)
		if err != nil {
			return nil
		}
		return b
	}
	var parts []string
	printed := 0
	i := int64(0)
	for ; i < r.Count && printed < limit; i++ {
		first := raw(i)
		reps := int64(1)
		if first != nil {
			for i+reps < r.Count && bytes.Equal(raw(i+reps), first) {
				reps++
			}
		}
		text := f.cValue(elems(i), depth+1)
		if reps > repeatThreshold {
			parts = append(parts, fmt.Sprintf("%s <repeats %d times>", text, reps))
			i += reps - 1
			printed += repeatThreshold
		} else {
			parts = append(parts, text)
			printed++
		}
	}
	s := "{" + strings.Join(parts, ", ")
	if i < r.Count {
		s += "..."
	}
	return s + "}"
}

func (f *formatter) cEnum(v Value, r *Type) string {
	b, err := v.Contents(f.mem)
	if err != nil {
		return errText(err)
	}
	if f.opts.Format != 0 {
		return f.intText(b, isSignedEnc(r.Encoding), f.opts.Format)
	}
	x := int64(leUint(b))
	if isSignedEnc(r.Encoding) {
		x = signExtend(uint64(x), 8*len(b))
	}
	qual := func(n string) string {
		if r.Lang != LangCPlusPlus {
			return n
		}
		if r.Scoped {
			return r.Name + "::" + n
		}
		if i := strings.LastIndex(r.Name, "::"); i >= 0 {
			return r.Name[:i+2] + n
		}
		return n
	}
	for _, e := range r.Enumerators {
		if e.Value == x {
			return qual(e.Name)
		}
	}
	// A "flag enum" (disjoint, non-negative values) prints as the
	// enumerators it is made of.
	flag := true
	var mask int64
	for _, e := range r.Enumerators {
		if e.Value < 0 || mask&e.Value != 0 {
			flag = false
			break
		}
		mask |= e.Value
	}
	if !flag || x < 0 {
		return strconv.FormatInt(x, 10)
	}
	var names []string
	rest := x
	for _, e := range r.Enumerators {
		if e.Value != 0 && rest&e.Value == e.Value {
			names = append(names, qual(e.Name))
			rest &^= e.Value
		}
	}
	if len(names) == 0 && x == 0 {
		return "0"
	}
	if rest != 0 {
		names = append(names, fmt.Sprintf("unknown: %#x", rest))
	}
	return "(" + strings.Join(names, " | ") + ")"
}

// cxxPretty renders the libstdc++ types gdb's pretty printers handle.
func (f *formatter) cxxPretty(v Value, r *Type, depth int) (string, bool) {
	if r.Lang != LangCPlusPlus {
		return "", false
	}
	switch {
	case isStdString(r.Name) && f.opts.Format == 0:
		b, more, err := f.stdString(v)
		if err != nil {
			return errText(err), true
		}
		return gdbString(b, f.opts.stringLimit(), more), true
	case strings.HasPrefix(r.Name, "std::vector<") && !strings.HasPrefix(r.Name, "std::vector<bool"):
		start, n, capacity, el, err := f.stdVector(v)
		if err != nil {
			return "", false
		}
		s := fmt.Sprintf("std::vector of length %d, capacity %d", n, capacity)
		if n == 0 {
			return s, true
		}
		limit := int64(f.opts.elements())
		var parts []string
		for i := int64(0); i < n && i < limit; i++ {
			parts = append(parts, f.cValue(atAddr("", el, start+uint64(i*el.Size)), depth+1))
		}
		body := strings.Join(parts, ", ")
		if n > limit {
			body += "..."
		}
		return s + " = {" + body + "}", true
	}
	return "", false
}

func isStdString(name string) bool {
	return strings.HasPrefix(name, "std::__cxx11::basic_string<char,") || strings.HasPrefix(name, "std::basic_string<char,") ||
		name == "std::__cxx11::basic_string<char>" || name == "std::basic_string<char>"
}

// stdString reads a libstdc++ std::string's bytes, at most the string
// limit of them, and whether there are more.
func (f *formatter) stdString(v Value) ([]byte, bool, error) {
	s, err := f.seq(v, "%s is not a std::string")
	if err != nil {
		return nil, false, err
	}
	limit := int64(f.opts.stringLimit())
	b, err := readMem(f.mem, s.Data, min(s.Len, limit))
	return b, s.Len > limit, err
}

// stdVector reads a libstdc++ std::vector's storage (see Sequence).
func (f *formatter) stdVector(v Value) (start uint64, n, capacity int64, el *Type, err error) {
	s, err := f.seq(v, "%s is not a std::vector")
	return s.Data, s.Len, s.Cap, s.Elem, err
}
