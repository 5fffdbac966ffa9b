package dwarf

// This file renders values the way each language's debugger does, so a
// user reads what they are used to: gdb for C and C++ (with the libstdc++
// pretty printers' std::string and std::vector), Rust's Debug notation as
// rust-gdb's printers approximate it, and delve for Go. It also walks
// values (fields, elements, pointees, map entries) for trees and for the
// expression evaluator.

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
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

func readMem(mem Memory, addr uint64, n int64) ([]byte, error) {
	if n < 0 {
		return nil, errors.New("value of unknown size")
	}
	if n > 1<<30 {
		return nil, fmt.Errorf("value of %d bytes is too large to read", n)
	}
	buf := make([]byte, n)
	if err := ReadMemory(mem, addr, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// Contents returns the bytes of a value (reading memory for InMem values).
func (v Value) Contents(mem Memory) ([]byte, error) {
	switch {
	case v.Optimized:
		return nil, errors.New("value has been optimized out")
	case v.Err != nil:
		return nil, v.Err
	case v.Type == nil:
		return nil, errors.New("value has no type")
	case !v.InMem:
		if v.Type.Size >= 0 && int64(len(v.Bytes)) < v.Type.Size {
			return nil, fmt.Errorf("value of type %s has %d of its %d bytes", v.Type.Name, len(v.Bytes), v.Type.Size)
		}
		return v.Bytes, nil
	}
	b, err := readMem(mem, v.Addr, v.Type.Size)
	if err != nil {
		return nil, fmt.Errorf("value of type %s: %w", v.Type.Name, err)
	}
	return b, nil
}

// pageCache serves the many small reads of one rendering from whole pages,
// so formatting a struct or an array reads the target once per page.
type pageCache struct {
	mem   Memory
	pages map[uint64][]byte // nil entry: the page is unreadable
}

const cachePage = 4096

func newPageCache(mem Memory) Memory {
	if mem == nil {
		return nil
	}
	if _, ok := mem.(*pageCache); ok {
		return mem
	}
	return &pageCache{mem: mem, pages: map[uint64][]byte{}}
}

func (c *pageCache) ReadAt(p []byte, addr uint64) (int, error) {
	if len(p) > 64*cachePage || len(c.pages) > 4096 {
		return c.mem.ReadAt(p, addr)
	}
	n := 0
	for n < len(p) {
		a := addr + uint64(n)
		base := a &^ (cachePage - 1)
		page, ok := c.pages[base]
		if !ok {
			buf := make([]byte, cachePage)
			if got, err := c.mem.ReadAt(buf, base); got == cachePage && err == nil {
				page = buf
			}
			c.pages[base] = page
		}
		if page == nil {
			// Pages can be partly readable for some Memory kinds (a byte
			// slice); ask for the exact bytes.
			got, err := c.mem.ReadAt(p[n:], a)
			return n + got, err
		}
		n += copy(p[n:], page[a-base:])
	}
	return n, nil
}

// subValue is the part of v of type typ at byte offset off.
func subValue(v Value, name string, typ *Type, off int64) Value {
	c := Value{Name: name, Type: typ}
	switch {
	case v.Optimized:
		c.Optimized = true
	case v.Err != nil:
		c.Err = v.Err
	case v.InMem:
		c.Addr, c.InMem = v.Addr+uint64(off), true
	case typ.Size < 0 || off < 0 || off+typ.Size > int64(len(v.Bytes)):
		c.Err = fmt.Errorf("%s lies outside the value", name)
	default:
		c.Bytes = v.Bytes[off : off+typ.Size]
	}
	return c
}

// atAddr is a value of type typ in memory at addr.
func atAddr(name string, typ *Type, addr uint64) Value {
	return Value{Name: name, Type: typ, Addr: addr, InMem: true}
}

// leUint decodes a little-endian integer of up to 8 bytes.
func leUint(b []byte) uint64 {
	var x uint64
	for i := len(b) - 1; i >= 0 && i < 8; i-- {
		x = x<<8 | uint64(b[i])
	}
	return x
}

func signExtend(x uint64, bits int) int64 {
	if bits >= 64 || bits <= 0 {
		return int64(x)
	}
	shift := 64 - bits
	return int64(x<<shift) >> shift
}

func isSignedEnc(enc int) bool {
	return enc == ATESigned || enc == ATESignedChar
}

// isCharType says whether t is a one-byte character type, whose arrays
// and pointers gdb prints as strings.
func isCharType(t *Type) bool {
	t = stripType(t)
	return t != nil && t.Kind == KindBase && t.Size == 1 &&
		(t.Encoding == ATESignedChar || t.Encoding == ATEUnsignedChar || t.Encoding == ATEUTF && t.Lang != LangRust)
}

// uintValue reads a scalar value (integer, pointer, enum, bool) of up to 8
// bytes as an unsigned number.
func uintValue(v Value, mem Memory) (uint64, error) {
	b, err := v.Contents(mem)
	if err != nil {
		return 0, err
	}
	if len(b) > 8 {
		b = b[:8]
	}
	return leUint(b), nil
}

// intValue reads an integer value, sign-extended when its type is signed.
func intValue(v Value, mem Memory) (int64, error) {
	b, err := v.Contents(mem)
	if err != nil {
		return 0, err
	}
	if len(b) > 8 {
		b = b[:8]
	}
	x := leUint(b)
	r := stripType(v.Type)
	if r != nil && isSignedEnc(r.Encoding) {
		return signExtend(x, 8*len(b)), nil
	}
	return int64(x), nil
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

// ---------------------------------------------------------------- C, C++

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
				s := fmt.Sprintf("%#x", v.Addr)
				if sym := f.symbolize(v.Addr); sym != "" {
					s += " <" + sym + ">"
				}
				return "{" + v.Type.Name + "} " + s
			}
		}
	}
	return f.cValue(v, 0)
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
			s := fmt.Sprintf("%#x", v.Addr)
			if sym := f.symbolize(v.Addr); sym != "" {
				s += " <" + sym + ">"
			}
			return "{" + v.Type.Name + "} " + s
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
		var sb strings.Builder
		for i := 0; i < len(ch); i++ {
			fmt.Fprintf(&sb, "\\%03o", ch[i])
		}
		return sb.String()
	}
	if len(ch) == 1 {
		c := ch[0]
		switch c {
		case '\a':
			return `\a`
		case '\b':
			return `\b`
		case '\f':
			return `\f`
		case '\n':
			return `\n`
		case '\r':
			return `\r`
		case '\t':
			return `\t`
		case '\v':
			return `\v`
		case 033:
			return `\033`
		case '\\':
			return `\\`
		case q:
			return `\` + string(q)
		}
		if c < 0x20 || c == 0x7f {
			return fmt.Sprintf("\\%03o", c)
		}
		return ch
	}
	r, _ := utf8.DecodeRuneInString(ch)
	if !unicode.IsPrint(r) {
		var sb strings.Builder
		for i := 0; i < len(ch); i++ {
			fmt.Fprintf(&sb, "\\%03o", ch[i])
		}
		return sb.String()
	}
	return ch
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

// seq is Sequence for a value the caller takes for a sequence; notOne
// words the error, with the type's name, when it is none.
func (f *formatter) seq(v Value, notOne string) (Seq, error) {
	s, ok, err := Sequence(v, f.mem, f.t.typeLookup)
	if err == nil && (!ok || s.Array != nil || s.Elem == nil) {
		err = fmt.Errorf(notOne, v.Type.Name)
	}
	return s, err
}

// ------------------------------------------------------------------ Rust

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

// -------------------------------------------------------------------- Go

type goFlags struct {
	top      bool
	withType bool
}

func (f *formatter) goMaxRecurse() int {
	if f.opts.MaxDepth > 0 {
		return f.opts.MaxDepth
	}
	return 1
}

// goValue renders a Go value as delve's print does.
func (f *formatter) goValue(v Value, fl goFlags, level int) string {
	if v.Optimized {
		return "<optimized out>"
	}
	if v.Err != nil {
		return "(unreadable " + v.Err.Error() + ")"
	}
	typeName := v.Type.Name
	r := stripType(v.Type)
	kind := GoKindOf(v.Type)
	switch kind {
	case GoKindString:
		s, n, err := f.goString(v)
		if err != nil {
			return "(unreadable " + err.Error() + ")"
		}
		if int64(len(s)) != n {
			s += fmt.Sprintf("...+%d more", n-int64(len(s)))
		}
		return strconv.Quote(s)

	case GoKindSlice, GoKindArray:
		base, n, capacity, el, err := f.goSeq(v)
		if err != nil {
			return "(unreadable " + err.Error() + ")"
		}
		prefix := ""
		if fl.withType {
			if kind == GoKindSlice {
				prefix = fmt.Sprintf("%s len: %d, cap: %d, ", typeName, n, capacity)
			} else {
				prefix = typeName + " "
			}
		}
		if kind == GoKindSlice && base == 0 && n == 0 {
			return prefix + "nil"
		}
		limit := int64(f.opts.elements())
		var parts []string
		for i := int64(0); i < n && i < limit; i++ {
			var ev Value
			if kind == GoKindArray {
				ev = subValue(v, "", el, i*el.Size)
			} else {
				ev = atAddr("", el, base+uint64(i*el.Size))
			}
			parts = append(parts, f.goValue(ev, goFlags{}, level+1))
		}
		body := strings.Join(parts, ",")
		if n > limit {
			body += fmt.Sprintf(",...+%d more", n-limit)
		}
		return prefix + "[" + body + "]"

	case GoKindPointer:
		addr, err := uintValue(v, f.mem)
		if err != nil {
			return "(unreadable " + err.Error() + ")"
		}
		el := r.Elem
		if addr == 0 {
			if fl.withType && !fl.top {
				return typeName + " nil"
			}
			if fl.withType {
				return "*" + el.Name + " nil"
			}
			return "nil"
		}
		// delve follows pointers without counting a level, except
		// pointers to pointers and to interfaces.
		next := level
		ek := GoKindOf(el)
		if ek == GoKindPointer || ek == GoKindInterface {
			next++
			if ek == GoKindPointer && level > f.goMaxRecurse() {
				return fmt.Sprintf("(%s)(%#x)", goQuoteType(typeName), addr)
			}
		}
		return "*" + f.goValue(atAddr("", el, addr), goFlags{withType: fl.withType}, next)

	case GoKindUnsafePointer:
		addr, err := uintValue(v, f.mem)
		if err != nil {
			return "(unreadable " + err.Error() + ")"
		}
		if addr == 0 {
			return "unsafe.Pointer(nil)"
		}
		return fmt.Sprintf("unsafe.Pointer(%#x)", addr)

	case GoKindStruct:
		if level > f.goMaxRecurse() && len(r.Fields) > 0 {
			if v.InMem {
				return fmt.Sprintf("(*%s)(%#x)", goQuoteType(typeName), v.Addr)
			}
		}
		var parts []string
		for _, fd := range r.Fields {
			parts = append(parts, fd.Name+": "+f.goValue(f.fieldValue(v, fd), goFlags{withType: true}, level+1))
		}
		s := "{" + strings.Join(parts, ", ") + "}"
		if fl.withType {
			s = typeName + " " + s
		}
		return s

	case GoKindInterface:
		return f.goInterface(v, typeName, fl, level)

	case GoKindMap:
		return f.goMap(v, typeName, fl, level)

	case GoKindChan:
		addr, err := uintValue(v, f.mem)
		if err != nil {
			return "(unreadable " + err.Error() + ")"
		}
		if addr == 0 {
			return typeName + " nil"
		}
		hchan := stripType(r.Elem)
		if r.Kind != KindPointer || hchan.Kind != KindStruct {
			return fmt.Sprintf("%s %#x", typeName, addr)
		}
		hv := atAddr("", hchan, addr)
		var q, size uint64
		if qf, ok := fieldByName(hchan, "qcount"); ok {
			q, _ = uintValue(subValue(hv, "qcount", qf.Type, qf.Offset), f.mem)
		}
		if sf, ok := fieldByName(hchan, "dataqsiz"); ok {
			size, _ = uintValue(subValue(hv, "dataqsiz", sf.Type, sf.Offset), f.mem)
		}
		return fmt.Sprintf("%s %d/%d", typeName, q, size)

	case GoKindFunc:
		addr, err := uintValue(v, f.mem)
		if err != nil {
			return "(unreadable " + err.Error() + ")"
		}
		if addr == 0 {
			return "nil"
		}
		// A func value points to a funcval whose first word is the code.
		code, err := readMem(f.mem, addr, 8)
		if err != nil {
			return fmt.Sprintf("%#x", addr)
		}
		if sym := f.symbolize(leUint(code)); sym != "" {
			return sym
		}
		return fmt.Sprintf("%#x", leUint(code))
	}

	b, err := v.Contents(f.mem)
	if err != nil {
		return "(unreadable " + err.Error() + ")"
	}
	switch kind {
	case GoKindBool:
		if leUint(b) != 0 {
			return "true"
		}
		return "false"
	case GoKindFloat32, GoKindFloat64:
		var x float64
		if len(b) == 4 {
			x = float64(math.Float32frombits(uint32(leUint(b))))
		} else {
			x = math.Float64frombits(leUint(b))
		}
		return goFloat(x, 8*len(b))
	case GoKindComplex64, GoKindComplex128:
		h := len(b) / 2
		var re, im float64
		if h == 4 {
			re, im = float64(math.Float32frombits(uint32(leUint(b[:4])))), float64(math.Float32frombits(uint32(leUint(b[4:]))))
		} else {
			re, im = math.Float64frombits(leUint(b[:8])), math.Float64frombits(leUint(b[8:]))
		}
		return "(" + goFloat(re, 8*h) + " + " + goFloat(im, 8*h) + "i)"
	}
	signed := kind >= GoKindInt && kind <= GoKindInt64
	return f.intText(b, signed, f.opts.Format)
}

func goFloat(x float64, bits int) string {
	switch {
	case math.IsInf(x, 1):
		return "+Inf"
	case math.IsInf(x, -1):
		return "-Inf"
	case math.IsNaN(x):
		return "NaN"
	}
	return strconv.FormatFloat(x, 'f', -1, bits)
}

// goQuoteType quotes a type name with a package path, as delve does.
func goQuoteType(name string) string {
	if strings.Contains(name, "/") {
		return strconv.Quote(name)
	}
	return name
}

// goString reads a Go string (struct {str *uint8; len int}), at most
// MaxString bytes, and its full length.
func (f *formatter) goString(v Value) (string, int64, error) {
	s, err := f.seq(v, "string type %s has no str/len fields")
	if err != nil {
		return "", 0, err
	}
	b, err := readMem(f.mem, s.Data, min(s.Len, int64(f.opts.stringLimit())))
	if err != nil {
		return "", 0, err
	}
	return string(b), s.Len, nil
}

// goSeq reads the layout of a Go slice (see Sequence) or array.
func (f *formatter) goSeq(v Value) (base uint64, n, capacity int64, el *Type, err error) {
	r := stripType(v.Type)
	if r.Kind == KindArray {
		if r.Elem.Size < 0 {
			return 0, 0, 0, nil, fmt.Errorf("array of %s of unknown size", r.Elem.Name)
		}
		return v.Addr, r.Count, r.Count, r.Elem, nil
	}
	s, err := f.seq(v, "slice type %s lacks array/len/cap")
	return s.Data, s.Len, s.Cap, s.Elem, err
}

// goIface reads an interface value's dynamic type and its data as a value
// of that type; dyn is nil for a nil interface.
func (f *formatter) goIface(v Value) (dyn *Type, data Value, err error) {
	r := stripType(v.Type)
	df, ok := fieldByName(r, "data")
	if !ok {
		return nil, Value{}, fmt.Errorf("interface type %s has no data field", v.Type.Name)
	}
	var typeAddr uint64
	if tf, ok := fieldByName(r, "_type"); ok {
		typeAddr, err = uintValue(subValue(v, "_type", tf.Type, tf.Offset), f.mem)
	} else if tf, ok := fieldByName(r, "tab"); ok {
		var tab uint64
		tab, err = uintValue(subValue(v, "tab", tf.Type, tf.Offset), f.mem)
		if err == nil && tab != 0 {
			itab := stripType(stripType(tf.Type).Elem)
			off := int64(8) // ITab{Inter, Type, ...}
			if fl, ok := fieldByName(itab, "Type"); ok {
				off = fl.Offset
			} else if fl, ok := fieldByName(itab, "_type"); ok {
				off = fl.Offset
			}
			var b []byte
			b, err = readMem(f.mem, tab+uint64(off), 8)
			if err == nil {
				typeAddr = leUint(b)
			}
		}
	} else {
		return nil, Value{}, fmt.Errorf("interface type %s has no _type or tab field", v.Type.Name)
	}
	if err != nil || typeAddr == 0 {
		return nil, Value{}, err
	}
	dyn, direct, err := f.goRuntimeType(typeAddr)
	if err != nil {
		return nil, Value{}, err
	}
	word := subValue(v, "data", df.Type, df.Offset)
	if direct || GoKindOf(dyn) == GoKindPointer {
		// The data word is the value itself (a pointer-shaped type).
		b, err := word.Contents(f.mem)
		if err != nil {
			return nil, Value{}, err
		}
		buf := make([]byte, max(dyn.Size, 0))
		copy(buf, b)
		if word.InMem && dyn.Size <= 8 {
			return dyn, Value{Name: "data", Type: dyn, Addr: word.Addr, InMem: true}, nil
		}
		return dyn, Value{Name: "data", Type: dyn, Bytes: buf}, nil
	}
	p, err := uintValue(word, f.mem)
	if err != nil {
		return nil, Value{}, err
	}
	return dyn, atAddr("data", dyn, p), nil
}

// goRuntimeType maps the address of a runtime._type to the DWARF type the
// compiler tagged with its offset (DW_AT_go_runtime_type, relative to the
// image's runtime.types), and says whether values of the type are stored
// directly in an interface's data word.
func (f *formatter) goRuntimeType(addr uint64) (*Type, bool, error) {
	if f.t == nil {
		return nil, false, errors.New("no program to map runtime types")
	}
	for _, img := range f.t.Images {
		base, ok := img.Lookup("runtime.types")
		if !ok || addr < base.Addr {
			continue
		}
		end, ok := img.Lookup("runtime.etypes")
		if ok && addr >= end.Addr {
			continue
		}
		typ, err := img.typeByRuntimeType(addr - base.Addr)
		if err != nil {
			return nil, false, err
		}
		return typ, f.goDirectIface(addr, typ), nil
	}
	return nil, false, fmt.Errorf("runtime type at %#x is in no image's types", addr)
}

// goDirectIface reads the "direct interface" flag of a runtime._type:
// bit 5 of TFlag since Go 1.26, of Kind_ before.
func (f *formatter) goDirectIface(addr uint64, typ *Type) bool {
	abiType, err := f.t.TypeByName("internal/abi.Type")
	if err == nil {
		r := stripType(abiType)
		direct := false
		for _, name := range []string{"TFlag", "Kind_"} {
			if fl, ok := fieldByName(r, name); ok {
				if b, err := readMem(f.mem, addr+uint64(fl.Offset), 1); err == nil && b[0]&(1<<5) != 0 {
					direct = true
				}
			}
		}
		return direct
	}
	k := GoKindOf(typ)
	return k == GoKindPointer || k == GoKindMap || k == GoKindChan || k == GoKindFunc || k == GoKindUnsafePointer
}

func (f *formatter) goInterface(v Value, typeName string, fl goFlags, level int) string {
	dyn, data, err := f.goIface(v)
	if err != nil {
		return "(unreadable " + err.Error() + ")"
	}
	prefix := ""
	if dyn == nil {
		if fl.withType {
			return typeName + " nil"
		}
		return "nil"
	}
	if fl.withType {
		prefix = fmt.Sprintf("%s(%s) ", typeName, dyn.Name)
	}
	if GoKindOf(dyn) == GoKindPointer {
		p, err := uintValue(data, f.mem)
		if err != nil {
			return prefix + "(unreadable " + err.Error() + ")"
		}
		if p == 0 {
			return prefix + "nil"
		}
		if level > f.goMaxRecurse() {
			return prefix + fmt.Sprintf("%#x", p)
		}
	}
	return prefix + f.goValue(data, goFlags{withType: !fl.withType}, level)
}

// goMap renders a map the way delve does, entries in table order.
func (f *formatter) goMap(v Value, typeName string, fl goFlags, level int) string {
	prefix := ""
	if fl.withType {
		prefix = typeName + " "
	}
	addr, err := uintValue(v, f.mem)
	if err != nil {
		return prefix + "(unreadable " + err.Error() + ")"
	}
	if addr == 0 {
		return prefix + "nil"
	}
	limit := f.opts.elements()
	if level > f.goMaxRecurse() {
		limit = 0
	}
	var parts []string
	count, err := f.t.goMapEntries(v, f.mem, limit, func(k, val Value) bool {
		parts = append(parts, f.goValue(k, goFlags{}, level+1)+": "+f.goValue(val, goFlags{}, level+1))
		return true
	})
	if err != nil {
		return prefix + "(unreadable " + err.Error() + ")"
	}
	var sb strings.Builder
	sb.WriteString(prefix + "[")
	for _, p := range parts {
		sb.WriteString(p + ", ")
	}
	if int64(len(parts)) != count {
		if len(parts) > 0 {
			fmt.Fprintf(&sb, ",...+%d more", count-int64(len(parts)))
		} else {
			sb.WriteString("...")
		}
	}
	sb.WriteString("]")
	return sb.String()
}

// goMapEntries calls fn for up to limit entries of a Go map and returns
// the map's length. It reads both layouts from the binary's own DWARF:
// the swiss tables of Go 1.24+ (internal/runtime/maps.Map: a small map's
// dirPtr is one group, a large one's a directory of tables of groups) and
// the hmap buckets before.
func (t *Table) goMapEntries(v Value, mem Memory, limit int, fn func(k, val Value) bool) (int64, error) {
	r := stripType(v.Type)
	addr, err := uintValue(v, mem)
	if err != nil {
		return 0, err
	}
	if addr == 0 {
		return 0, nil
	}
	if r.Kind != KindPointer {
		return 0, fmt.Errorf("map type %s is not a pointer", v.Type.Name)
	}
	hdr := stripType(r.Elem)
	hv := atAddr("", hdr, addr)
	field := func(sv Value, name string) (Value, bool) {
		st := stripType(sv.Type)
		fd, ok := fieldByName(st, name)
		if !ok {
			return Value{}, false
		}
		return subValue(sv, name, fd.Type, fd.Offset), true
	}
	uintField := func(sv Value, name string) (uint64, error) {
		fv, ok := field(sv, name)
		if !ok {
			return 0, fmt.Errorf("map layout %s has no field %s", stripType(sv.Type).Name, name)
		}
		return uintValue(fv, mem)
	}
	keyType, elemType := mapKeyElem(v.Type)
	// A key or element too large for a slot is stored behind a pointer.
	indirect := func(x Value, want *Type) Value {
		xt := stripType(x.Type)
		if want != nil && xt.Kind == KindPointer && GoKindOf(want) != GoKindPointer && stripType(want).Kind != KindPointer {
			p, err := uintValue(x, mem)
			if err != nil {
				return Value{Type: want, Err: err}
			}
			return atAddr(x.Name, want, p)
		}
		if want != nil {
			x.Type = want
		}
		return x
	}
	emitted := 0
	emit := func(k, val Value) bool {
		if emitted >= limit {
			return false
		}
		emitted++
		return fn(indirect(k, keyType), indirect(val, elemType))
	}

	if _, ok := fieldByName(hdr, "dirPtr"); ok {
		used, err := uintField(hv, "used")
		if err != nil {
			return 0, err
		}
		dirPtr, err := uintField(hv, "dirPtr")
		if err != nil {
			return 0, err
		}
		dirLen, err := uintField(hv, "dirLen")
		if err != nil {
			return 0, err
		}
		dpf, _ := fieldByName(hdr, "dirPtr")
		// dirPtr is declared **table; the table type leads to the group.
		tablePtr := stripType(stripType(dpf.Type).Elem)
		table := stripType(tablePtr.Elem)
		gf, ok := fieldByName(table, "groups")
		if !ok {
			return 0, fmt.Errorf("map table type %s has no groups", table.Name)
		}
		groupsRef := stripType(gf.Type)
		dataF, ok1 := fieldByName(groupsRef, "data")
		if !ok1 {
			return 0, fmt.Errorf("map groups type %s has no data", groupsRef.Name)
		}
		group := stripType(stripType(dataF.Type).Elem)
		if group.Size <= 0 {
			return int64(used), fmt.Errorf("map group type %s has no size", group.Name)
		}
		// visit walks the slots of one group; it returns false to stop.
		visit := func(gaddr uint64) (bool, error) {
			gv := atAddr("", group, gaddr)
			ctrl, err := uintField(gv, "ctrl")
			if err != nil {
				return false, err
			}
			slots, hasSlots := field(gv, "slots")
			keys, hasKeys := field(gv, "keys")
			elems, _ := field(gv, "elems")
			for i := int64(0); i < 8; i++ {
				if byte(ctrl>>(8*i))&0x80 != 0 {
					continue // empty or deleted
				}
				var k, e Value
				switch {
				case hasSlots:
					st := stripType(slots.Type)
					slotT := stripType(st.Elem)
					sv := subValue(slots, "", slotT, i*slotT.Size)
					kf, ok1 := fieldByName(slotT, "key")
					ef, ok2 := fieldByName(slotT, "elem")
					if !ok1 || !ok2 {
						return false, fmt.Errorf("map slot type %s lacks key/elem", slotT.Name)
					}
					k, e = subValue(sv, "key", kf.Type, kf.Offset), subValue(sv, "elem", ef.Type, ef.Offset)
				case hasKeys:
					kt, et := stripType(stripType(keys.Type).Elem), stripType(stripType(elems.Type).Elem)
					k, e = subValue(keys, "", kt, i*kt.Size), subValue(elems, "", et, i*et.Size)
				default:
					return false, fmt.Errorf("map group type %s has no slots", group.Name)
				}
				if !emit(k, e) {
					return false, nil
				}
			}
			return true, nil
		}
		if dirLen == 0 {
			if dirPtr == 0 {
				return int64(used), nil
			}
			_, err := visit(dirPtr)
			return int64(used), err
		}
		if dirLen > 1<<20 {
			return int64(used), fmt.Errorf("corrupt map directory of %d tables", dirLen)
		}
		var last uint64
		for i := uint64(0); i < dirLen; i++ {
			tb, err := readMem(mem, dirPtr+8*i, 8)
			if err != nil {
				return int64(used), err
			}
			tp := leUint(tb)
			// Several directory entries share a table until it splits.
			if tp == 0 || tp == last {
				continue
			}
			last = tp
			tv := atAddr("", table, tp)
			gv, _ := field(tv, "groups")
			data, err := uintField(gv, "data")
			if err != nil {
				return int64(used), err
			}
			mask, err := uintField(gv, "lengthMask")
			if err != nil {
				return int64(used), err
			}
			if mask > 1<<24 {
				return int64(used), fmt.Errorf("corrupt map table of %d groups", mask+1)
			}
			for g := uint64(0); g <= mask; g++ {
				more, err := visit(data + g*uint64(group.Size))
				if err != nil || !more {
					return int64(used), err
				}
			}
		}
		return int64(used), nil
	}

	// Go 1.23 and before: runtime.hmap with 2^B buckets of 8 entries,
	// each with overflow buckets.
	count, err := uintField(hv, "count")
	if err != nil {
		return 0, err
	}
	bl, err := uintField(hv, "B")
	if err != nil {
		return 0, err
	}
	buckets, err := uintField(hv, "buckets")
	if err != nil {
		return 0, err
	}
	oldbuckets, _ := uintField(hv, "oldbuckets")
	bf, _ := fieldByName(hdr, "buckets")
	bucket := stripType(stripType(bf.Type).Elem)
	if bucket.Kind != KindStruct || bucket.Size <= 0 {
		return int64(count), fmt.Errorf("map bucket type %s is not a struct", bucket.Name)
	}
	const emptyOne, minTopHash = 1, 5
	walk := func(baddr uint64) (bool, error) {
		for hops := 0; baddr != 0 && hops < 1<<16; hops++ {
			bv := atAddr("", bucket, baddr)
			th, ok1 := field(bv, "tophash")
			keys, ok2 := field(bv, "keys")
			vals, ok3 := field(bv, "values")
			if !ok1 || !ok2 || !ok3 {
				return false, fmt.Errorf("map bucket type %s lacks tophash/keys/values", bucket.Name)
			}
			tops, err := th.Contents(mem)
			if err != nil {
				return false, err
			}
			kt, vt := stripType(stripType(keys.Type).Elem), stripType(stripType(vals.Type).Elem)
			for i := range tops {
				if tops[i] <= emptyOne {
					continue
				}
				if !emit(subValue(keys, "", kt, int64(i)*kt.Size), subValue(vals, "", vt, int64(i)*max(vt.Size, 0))) {
					return false, nil
				}
			}
			baddr, err = uintField(bv, "overflow")
			if err != nil {
				return false, err
			}
		}
		return true, nil
	}
	nb := uint64(1) << bl
	for i := uint64(0); i < nb && bl < 32; i++ {
		// While growing, a bucket not yet evacuated still lives in the old
		// array; read it there, once.
		if oldbuckets != 0 {
			oldIdx := i & (nb/2 - 1)
			ob := oldbuckets + oldIdx*uint64(bucket.Size)
			tb, err := readMem(mem, ob, 1)
			if err == nil && !(tb[0] > emptyOne && tb[0] < minTopHash) {
				if oldIdx == i {
					if more, err := walk(ob); err != nil || !more {
						return int64(count), err
					}
				}
				continue
			}
		}
		if more, err := walk(buckets + i*uint64(bucket.Size)); err != nil || !more {
			return int64(count), err
		}
	}
	return int64(count), nil
}

// mapKeyElem finds a map type's key and element types from DW_AT_go_key
// and DW_AT_go_elem along its typedef chain.
func mapKeyElem(t *Type) (*Type, *Type) {
	for u := t; u != nil; u = u.Elem {
		if u.GoKey != nil || u.GoElem != nil {
			return u.GoKey, u.GoElem
		}
		if u.Kind != KindTypedef && u.Kind != KindQualified {
			break
		}
	}
	return nil, nil
}

// MapLookup finds a key in a Go map by comparing it with every entry
// (strings by contents, other keys by their bytes); ok is false when the
// map has no such key.
func (t *Table) MapLookup(m Value, key Value, mem Memory) (Value, bool, error) {
	f := t.newFormatter(mem, FormatOptions{})
	want, err := f.goKeyBytes(key)
	if err != nil {
		return Value{}, false, fmt.Errorf("map key: %w", err)
	}
	var found Value
	var ok bool
	var keyErr error
	_, err = t.goMapEntries(m, f.mem, math.MaxInt, func(k, val Value) bool {
		kb, err := f.goKeyBytes(k)
		if err != nil {
			keyErr = err
			return true
		}
		if bytes.Equal(kb, want) {
			found, ok = val, true
			return false
		}
		return true
	})
	if err != nil {
		return Value{}, false, fmt.Errorf("looking up map key: %w", err)
	}
	if !ok && keyErr != nil {
		return Value{}, false, fmt.Errorf("reading map keys: %w", keyErr)
	}
	return found, ok, nil
}

// goKeyBytes is the comparable form of a map key: a string's contents,
// the raw bytes of any other key.
func (f *formatter) goKeyBytes(k Value) ([]byte, error) {
	if GoKindOf(k.Type) == GoKindString {
		f2 := *f
		f2.opts.MaxString = math.MaxInt32
		s, _, err := f2.goString(k)
		return []byte("s" + s), err
	}
	b, err := k.Contents(f.mem)
	return append([]byte("b"), b...), err
}

// ------------------------------------------------------------ navigation

// Children returns the expandable parts of a value for a tree view: struct
// fields (base classes first), array/slice/vector elements (capped at
// opts.MaxElements), map entries (Name = formatted key), the pointee of a
// pointer (one child named "*"), the payload of an enum variant; nil for
// scalars.
func (t *Table) Children(v Value, mem Memory, opts FormatOptions) []Value {
	if v.Optimized || v.Err != nil || v.Type == nil {
		return nil
	}
	f := t.newFormatter(mem, opts)
	r := stripType(v.Type)
	limit := int64(opts.elements())
	elems := func(base uint64, n int64, el *Type) []Value {
		var out []Value
		for i := int64(0); i < n && i < limit && el.Size >= 0; i++ {
			out = append(out, atAddr(fmt.Sprintf("[%d]", i), el, base+uint64(i*el.Size)))
		}
		return out
	}
	switch v.Type.Lang {
	case LangGo:
		switch GoKindOf(v.Type) {
		case GoKindString, GoKindChan, GoKindFunc, GoKindUnsafePointer:
			return nil
		case GoKindSlice:
			base, n, _, el, err := f.goSeq(v)
			if err != nil {
				return nil
			}
			return elems(base, n, el)
		case GoKindInterface:
			dyn, data, err := f.goIface(v)
			if err != nil || dyn == nil {
				return nil
			}
			return []Value{data}
		case GoKindMap:
			var out []Value
			_, _ = t.goMapEntries(v, f.mem, int(limit), func(k, val Value) bool {
				val.Name = f.goValue(k, goFlags{}, 1)
				out = append(out, val)
				return true
			})
			return out
		}
	case LangRust:
		if r.Kind == KindStruct && r.Variants != nil {
			_, payload, ok := rustVariant(v, r, f.mem)
			if !ok {
				return nil
			}
			return t.Children(payload, mem, opts)
		}
		if r.Kind == KindStruct && (strings.HasPrefix(r.Name, "alloc::vec::Vec<") || strings.HasPrefix(r.Name, "&[") || strings.HasPrefix(r.Name, "&mut [")) {
			if p, n, el, ok := f.rustSeq(v); ok {
				return elems(p, n, el)
			}
		}
		if r.Name == "&str" || r.Name == "alloc::string::String" {
			return nil
		}
	case LangCPlusPlus:
		if r.Kind == KindStruct && isStdString(r.Name) {
			return nil
		}
		if r.Kind == KindStruct && strings.HasPrefix(r.Name, "std::vector<") {
			if start, n, _, el, err := f.stdVector(v); err == nil {
				return elems(start, n, el)
			}
		}
	}
	switch r.Kind {
	case KindStruct, KindUnion:
		out := make([]Value, 0, len(r.Fields))
		for _, fl := range r.Fields {
			c := f.fieldValue(v, fl)
			if fl.Base {
				c.Name = "<" + fl.Type.Name + ">"
			}
			out = append(out, c)
		}
		return out
	case KindArray:
		if r.Count < 0 || r.Elem.Size < 0 {
			return nil
		}
		var out []Value
		for i := int64(0); i < r.Count && i < limit; i++ {
			out = append(out, subValue(v, fmt.Sprintf("[%d]", i), r.Elem, i*r.Elem.Size))
		}
		return out
	case KindPointer, KindReference:
		d, err := t.Deref(v, mem)
		if err != nil || stripType(d.Type).Kind == KindVoid || stripType(d.Type).Kind == KindFunc {
			return nil
		}
		if r.Kind == KindReference {
			return t.Children(d, mem, opts)
		}
		d.Name = "*"
		return []Value{d}
	}
	return nil
}

// Deref follows a pointer or reference.
func (t *Table) Deref(v Value, mem Memory) (Value, error) {
	if v.Type == nil {
		return Value{}, errors.New("dereferencing a value without a type")
	}
	r := stripType(v.Type)
	if r.Kind != KindPointer && r.Kind != KindReference {
		return Value{}, fmt.Errorf("attempt to take contents of a non-pointer value of type %s", v.Type.Name)
	}
	addr, err := uintValue(v, mem)
	if err != nil {
		return Value{}, fmt.Errorf("dereferencing %s: %w", v.Name, err)
	}
	if addr == 0 {
		return Value{}, fmt.Errorf("dereferencing %s: %w", v.Name, &MemoryError{Addr: 0, Err: errNullPointer})
	}
	return atAddr("*"+v.Name, r.Elem, addr), nil
}
