package dwarf

// This file follows implicit pointers (DW_OP_implicit_pointer and
// DW_OP_GNU_implicit_pointer): pointers an optimizer removed while keeping
// what they point to, which gdb shows as "<synthetic pointer>" and
// dereferences by reading the target variable as the frame sees it.

import (
	"debug/dwarf"
	"errors"
	"fmt"
)

// ImplicitPointer is a pointer with no value of its own: it points Offset
// bytes into the object the DIE at DIE (a .debug_info offset) describes.
type ImplicitPointer struct {
	DIE    uint64
	Offset int64
	// scope is the frame the pointer was read in, where its target is
	// read too (nil: the pointer cannot be followed).
	scope *frameScope
}

// Errors of dereferencing a synthetic pointer, gdb's words.
var (
	errSyntheticRegister = errors.New("cannot use offset on synthetic pointer to register")
	errSyntheticBounds   = errors.New("access outside bounds of object referenced via synthetic pointer")
)

// Add is the pointer moved by delta bytes, as p+n is.
func (p *ImplicitPointer) Add(delta int64) *ImplicitPointer {
	q := *p
	q.Offset += delta
	return &q
}

// Deref reads the object of type typ the pointer points to: part of the
// target variable's value, as gdb reads it (an offset into a register
// target or past the end of a computed one is an error; a target the
// optimizer dropped is <optimized out>).
func (p *ImplicitPointer) Deref(typ *Type) (Value, error) {
	if p.scope == nil {
		return Value{}, fmt.Errorf("synthetic pointer to DIE %#x: no frame to read its target in", p.DIE)
	}
	return p.scope.pointee(p.DIE, p.Offset, typ)
}

// pointee is the object of type typ off bytes into the variable (or
// constant) the DIE at die describes, in this frame.
func (sc *frameScope) pointee(die uint64, off int64, typ *Type) (Value, error) {
	r := sc.dw.Reader()
	r.Seek(dwarf.Offset(die))
	e, err := r.Next()
	if err != nil || e == nil {
		return Value{}, fmt.Errorf("target of a synthetic pointer at DIE %#x: %v", die, err)
	}
	size := typ.Size
	whole := int64(0) // the target's own size, when its type is known
	if to, _ := attrVia(sc.dw, e, dwarf.AttrType); to != nil {
		if o, ok := to.(dwarf.Offset); ok {
			if t, err := sc.img.TypeAt(o); err == nil {
				whole = t.Size
			}
		}
	}
	out := Value{Type: typ}
	if cv := e.Val(dwarf.AttrConstValue); cv != nil {
		return sliceTarget(out, constBytes(cv, whole), off, size)
	}
	loc, _, err := sc.location(e)
	switch {
	case errors.Is(err, ErrOptimizedOut):
		out.Optimized = true
		return out, nil
	case err != nil:
		return Value{}, fmt.Errorf("target of a synthetic pointer at DIE %#x: %w", die, err)
	}
	if len(loc.Pieces) == 1 {
		switch pc := loc.Pieces[0]; pc.Kind {
		case PieceMemory:
			out.Addr, out.InMem = pc.Addr+uint64(off), true
			return out, nil
		case PieceRegister:
			if off != 0 {
				return Value{}, errSyntheticRegister
			}
		case PieceImplicitPointer:
			if off == 0 {
				// A pointer to a pointer that was optimized away too.
				v := ReadLocation(loc, size, sc.mem, sc.ctx.Regs)
				v.Type, v.Synthetic.scope = typ, sc
				return v, nil
			}
		}
	}
	v := ReadLocation(loc, whole, sc.mem, sc.ctx.Regs)
	switch {
	case v.Optimized:
		out.Optimized = true
		return out, nil
	case v.Err != nil:
		return Value{}, v.Err
	}
	return sliceTarget(out, v.Bytes, off, size)
}

// sliceTarget fills out with the size bytes at off of a target's
// contents b.
func sliceTarget(out Value, b []byte, off, size int64) (Value, error) {
	if off < 0 || size < 0 || off+size > int64(len(b)) {
		return Value{}, errSyntheticBounds
	}
	out.Bytes = b[off : off+size]
	return out, nil
}
