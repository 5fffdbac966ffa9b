package dwarf

// Go values, printed as delve prints them. Strings, slices and
// interfaces are structs in DWARF; their kind (gokind.go) says which.

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

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
