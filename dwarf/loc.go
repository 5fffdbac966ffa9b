package dwarf

// A location description (DWARF 5 section 2.6) says where a variable is:
// in memory, in registers, computed, or in pieces of these. This file
// holds what an evaluation yields and reads it into a Value; the
// expression machine is in op.go, location lists in loclists.go, entry
// values in entryvalue.go.

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrOptimizedOut says that a variable has no location at the pc, or that
// a value it depends on (an entry value, a register the unwinder could not
// recover) is not available. Callers show "<optimized out>".
var ErrOptimizedOut = errors.New("optimized out")

// LocContext is what a location expression may need. Only Regs is
// required for register-based expressions; the others are needed by the
// operations that use them, which fail with a clear error when they are
// missing.
type LocContext struct {
	Regs *Regs
	// CFA is the frame's canonical frame address, for DW_OP_call_frame_cfa
	// (0: unknown).
	CFA uint64
	// FrameBase evaluates DW_AT_frame_base lazily, for DW_OP_fbreg.
	FrameBase func() (uint64, error)
	Mem       Memory
	// Image provides the bias (DW_OP_addr and DW_OP_addrx hold link-time
	// addresses), .debug_addr and the DWARF data for typed operations.
	Image *Image
	// AddrBase is the CU's DW_AT_addr_base (or DW_AT_GNU_addr_base), for
	// DW_OP_addrx and DW_OP_constx.
	AddrBase uint64
	// CUOffset is the .debug_info offset of the compilation unit's header:
	// typed operations, DW_OP_call2/4 and DW_OP_GNU_parameter_ref name DIEs
	// relative to it. UnitContext fills it.
	CUOffset uint64
	// EntryValue resolves the sub-expression of DW_OP_entry_value to the
	// value it had when the current function was entered (see
	// Table.EntryValueResolver); nil when unavailable.
	EntryValue func(expr []byte) (uint64, error)
	// TLSBase returns the address of this image's TLS block in the current
	// thread, for DW_OP_form_tls_address and DW_OP_GNU_push_tls_address.
	TLSBase func() (uint64, error)
	// ObjectAddr is the address of the object being described, for
	// DW_OP_push_object_address (DW_AT_data_location and friends).
	ObjectAddr func() (uint64, error)
}

// PieceKind says where one piece of a location lives.
type PieceKind int

// Piece kinds.
const (
	// PieceMemory is at Addr in the target's memory.
	PieceMemory PieceKind = iota
	// PieceRegister is in register Reg (a DWARF register number).
	PieceRegister
	// PieceValue is not stored anywhere: Value holds it (DW_OP_stack_value,
	// DW_OP_implicit_value).
	PieceValue
	// PieceImplicitPointer is a pointer that was optimized away but whose
	// target is known: the DIE at ImplicitPtr, Offset bytes in.
	PieceImplicitPointer
	// PieceUndefined is optimized out.
	PieceUndefined
)

// String names the kind for messages.
func (k PieceKind) String() string {
	switch k {
	case PieceMemory:
		return "memory"
	case PieceRegister:
		return "register"
	case PieceValue:
		return "value"
	case PieceImplicitPointer:
		return "implicit pointer"
	case PieceUndefined:
		return "undefined"
	}
	return fmt.Sprintf("PieceKind(%d)", int(k))
}

// Piece is one part of a location.
type Piece struct {
	// Size is the size of the piece in bytes; 0 means the whole object (a
	// location without DW_OP_piece).
	Size int64
	Kind PieceKind
	Addr uint64
	Reg  int
	// Value is the little-endian contents of a PieceValue.
	Value []byte
	// ImplicitPtr is the .debug_info offset of the DIE an implicit pointer
	// points to.
	ImplicitPtr uint64
	// Offset is the byte offset into the register or value where a
	// DW_OP_bit_piece starts, or the offset added to an implicit
	// pointer's target.
	Offset int64
}

// Location is the result of evaluating a location description: one piece,
// several (a composite made with DW_OP_piece), or none when the variable is
// optimized out.
type Location struct {
	Pieces []Piece
}

// ImplicitPointerError is the Err of a Value that is (partly) a pointer the
// compiler optimized away: the pointed-to object is the DIE at DIE, Offset
// bytes in. gdb shows such pointers as "<synthetic pointer>".
type ImplicitPointerError struct {
	DIE    uint64
	Offset int64
}

// Error describes the implicit pointer.
func (e *ImplicitPointerError) Error() string {
	return fmt.Sprintf("implicit pointer to DIE %#x%+d", e.DIE, e.Offset)
}

// locState is how the current simple location ends: on the stack (memory,
// the default), in a register, as a value, or as an implicit pointer.
type locState int

// ReadLocation reads size bytes of a location into a Value: InMem and Addr
// when it is one memory piece (an lvalue), Bytes otherwise; Optimized when
// any needed piece is undefined or the location is empty. A size of 0 or
// less takes the size of the pieces.
func ReadLocation(loc Location, size int64, mem Memory, regs *Regs) Value {
	if len(loc.Pieces) == 0 {
		return Value{Optimized: true}
	}
	if len(loc.Pieces) == 1 && loc.Pieces[0].Kind == PieceMemory && (loc.Pieces[0].Size == 0 || loc.Pieces[0].Size >= size) {
		return Value{Addr: loc.Pieces[0].Addr, InMem: true}
	}
	if p := loc.Pieces[0]; len(loc.Pieces) == 1 && p.Kind == PieceImplicitPointer && (p.Size == 0 || p.Size >= size) {
		if size <= 0 {
			size = 8
		}
		return Value{Bytes: make([]byte, size), Synthetic: &ImplicitPointer{DIE: p.ImplicitPtr, Offset: p.Offset}}
	}
	if size <= 0 {
		for _, p := range loc.Pieces {
			switch {
			case p.Size > 0:
				size += p.Size
			case p.Kind == PieceValue:
				size += int64(len(p.Value) - int(p.Offset))
			default:
				size += 8
			}
		}
	}
	out := make([]byte, 0, size)
	var val Value
	for _, p := range loc.Pieces {
		if int64(len(out)) >= size {
			break
		}
		n := p.Size
		if n == 0 || int64(len(out))+n > size {
			n = size - int64(len(out))
		}
		switch p.Kind {
		case PieceUndefined:
			val.Optimized = true
			out = append(out, make([]byte, n)...)
		case PieceImplicitPointer:
			if val.Err == nil {
				val.Err = &ImplicitPointerError{DIE: p.ImplicitPtr, Offset: p.Offset}
			}
			out = append(out, make([]byte, n)...)
		case PieceMemory:
			b := make([]byte, n)
			if mem == nil {
				val.Err = errors.New("no memory to read")
			} else if _, err := mem.ReadAt(b, p.Addr); err != nil && val.Err == nil {
				val.Err = fmt.Errorf("read %d bytes at %#x: %w", n, p.Addr, err)
			}
			out = append(out, b...)
		case PieceRegister:
			if x, ok := xmmBytes(regs, uint64(p.Reg)); ok {
				// All 16 bytes: a double, a float, a vector piece.
				chunk := make([]byte, n)
				if p.Offset < int64(len(x)) {
					copy(chunk, x[p.Offset:])
				}
				if p.Offset+n > int64(len(x)) && val.Err == nil {
					val.Err = fmt.Errorf("%d bytes from %s at offset %d do not fit in the register", n, RegName(uint64(p.Reg)), p.Offset)
				}
				out = append(out, chunk...)
				continue
			}
			v, err := readReg(regs, uint64(p.Reg))
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], v)
			switch {
			case errors.Is(err, ErrOptimizedOut):
				val.Optimized = true
			case err != nil:
				if val.Err == nil {
					val.Err = err
				}
			case p.Offset+n > 8:
				if val.Err == nil {
					val.Err = fmt.Errorf("%d bytes from %s at offset %d do not fit in the register", n, RegName(uint64(p.Reg)), p.Offset)
				}
			}
			chunk := make([]byte, n)
			if p.Offset < 8 {
				copy(chunk, b[p.Offset:])
			}
			out = append(out, chunk...)
		case PieceValue:
			chunk := make([]byte, n)
			if p.Offset < int64(len(p.Value)) {
				copy(chunk, p.Value[p.Offset:])
			}
			out = append(out, chunk...)
		}
	}
	if int64(len(out)) < size {
		// The pieces describe less than the object: the rest is unknown.
		val.Optimized = true
		out = append(out, make([]byte, size-int64(len(out)))...)
	}
	val.Bytes = out
	return val
}

// xmmBytes returns SSE register n (a DWARF number) when regs has them.
func xmmBytes(regs *Regs, n uint64) ([]byte, bool) {
	if regs == nil || !regs.HaveXMM || n < RegXMM0 || n >= RegXMM0+16 {
		return nil, false
	}
	return regs.XMM[n-RegXMM0][:], true
}
