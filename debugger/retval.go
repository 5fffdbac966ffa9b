package debugger

import (
	"encoding/binary"

	"github.com/rewind-debugger/rewind/dwarf"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// A function's return value where finish stops, as gdb's "Value
// returned": found where the x86-64 System V ABI puts it. A value of up to
// 16 bytes comes in registers, each of its eightbytes in the next integer
// register (rax, rdx) or the next SSE one (xmm0, xmm1) by what it holds; a
// bigger one (or one with unaligned fields) in memory, whose address the
// function returns in rax.

// argClass is the ABI class of one eightbyte of a value.
type argClass int

const (
	classNone argClass = iota
	classInteger
	classSSE
)

// classify gives the eightbytes of a value of type t at offset off their
// classes, in cls; false for what it does not place (x87 long double,
// complex numbers, unaligned fields, a Rust enum's variants).
func classify(t *dwarf.Type, off int64, cls []argClass) bool {
	for t != nil && (t.Kind == dwarf.KindTypedef || t.Kind == dwarf.KindQualified) {
		t = t.Elem
	}
	if t == nil || t.Size < 0 || off+t.Size > int64(len(cls))*8 {
		return false
	}
	if t.Size == 0 {
		return true
	}
	mark := func(c argClass) bool {
		if t.Size > 8 || off%t.Size != 0 {
			return false // unaligned, or a 16-byte scalar
		}
		i := off / 8
		if c == classInteger || cls[i] == classNone {
			cls[i] = c
		}
		return true
	}
	switch t.Kind {
	case dwarf.KindBase:
		switch t.Encoding {
		case dwarf.ATEFloat:
			return (t.Size == 4 || t.Size == 8) && mark(classSSE)
		case dwarf.ATEComplexFloat:
			return false
		}
		return mark(classInteger)
	case dwarf.KindPointer, dwarf.KindReference, dwarf.KindEnum:
		return mark(classInteger)
	case dwarf.KindStruct, dwarf.KindUnion:
		if t.Variants != nil {
			return false
		}
		for _, f := range t.Fields {
			if f.BitSize > 0 {
				cls[(off+f.Offset)/8] = classInteger
				continue
			}
			if !classify(f.Type, off+f.Offset, cls) {
				return false
			}
		}
		return true
	case dwarf.KindArray:
		if t.Elem == nil || t.Count < 0 {
			return false
		}
		for i := int64(0); i < t.Count; i++ {
			if !classify(t.Elem, off+i*t.Elem.Size, cls) {
				return false
			}
		}
		return true
	}
	return false
}

// returnValue reads the value a function returns, at its return address
// (finish), and renders it as print does: it becomes $N, as gdb's.
func (s *Session) returnValue(fn *dwarf.Function) (string, bool) {
	typ, err := s.symbols().ReturnType(fn)
	if err != nil || typ == nil {
		return "", false
	}
	base := typ
	for base != nil && (base.Kind == dwarf.KindTypedef || base.Kind == dwarf.KindQualified) {
		base = base.Elem
	}
	if base == nil || base.Size <= 0 {
		return "", false
	}
	b, ok := s.returnedBytes(base)
	if !ok {
		return "", false
	}
	v := dwarf.Value{Type: typ, Bytes: b}
	s.values = append(s.values, v)
	// As print: a pointer shows its type first ("(void *) 0x…"), as
	// gdb's finish does.
	o := formatOpts
	o.TypePrefix = true
	return s.symbols().Format(v, s.mem(), o), true
}

// returnedBytes gathers the bytes of a returned value of type t (no
// typedef) from the registers or the memory rax points to.
func (s *Session) returnedBytes(t *dwarf.Type) ([]byte, bool) {
	tid := s.currentThread()
	regs, err := s.tl.Session().Regs(tid)
	if err != nil {
		return nil, false
	}
	cls := make([]argClass, 2)
	if t.Size > 16 || !classify(t, 0, cls) {
		if t.Size <= 16 || (t.Kind != dwarf.KindStruct && t.Kind != dwarf.KindUnion && t.Kind != dwarf.KindArray) {
			return nil, false
		}
		// In memory: the function returns its address.
		b := make([]byte, t.Size)
		n, err := s.mem().ReadAt(b, regs[trace.RAX])
		return b, err == nil && int64(n) == t.Size
	}
	var xmm []byte
	ints := []uint64{regs[trace.RAX], regs[trace.RDX]}
	out := make([]byte, 16)
	nextInt, nextSSE := 0, 0
	for i := 0; int64(i*8) < t.Size; i++ {
		switch cls[i] {
		case classSSE:
			if xmm == nil {
				x, err := s.tl.Session().FPRegs(tid)
				if err != nil || len(x) < 192 {
					return nil, false
				}
				xmm = x[160:192] // xmm0, xmm1 in user_fpregs_struct
			}
			copy(out[i*8:], xmm[nextSSE*16:nextSSE*16+8])
			nextSSE++
		default:
			binary.LittleEndian.PutUint64(out[i*8:], ints[nextInt])
			nextInt++
		}
	}
	return out[:t.Size], true
}
