package dwarf

// The DWARF expression machine (DWARF 5 section 2.5): a stack of typed
// values run over an expression to compute a location or a number,
// with the GNU extensions gcc emits. Steps and nesting are bounded so
// that a malformed expression cannot hang or exhaust the debugger.

import (
	"debug/dwarf"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
)

const (
	stateMemory locState = iota
	stateRegister
	stateValue
	stateImplicitValue
	stateImplicitPointer
)

// maxSteps bounds the operations one evaluation executes, so a malformed
// DW_OP_skip loop cannot hang the debugger.
const maxSteps = 100000

// maxDepth bounds nested evaluations (DW_OP_call*, entry values).
const maxDepth = 8

type evaluator struct {
	ctx    *LocContext
	stack  []stackValue
	pieces []Piece
	state  locState
	reg    int
	value  []byte
	ptrDIE uint64
	ptrOff int64
	steps  int
	depth  int
	types  map[uint64]*baseType
}

// EvalLocation evaluates a DWARF location description. An empty
// expression gives an empty Location (optimized out).
func EvalLocation(expr []byte, ctx *LocContext) (Location, error) {
	return evalLocation(expr, ctx, nil, 0)
}

func evalLocation(expr []byte, ctx *LocContext, initial []uint64, depth int) (Location, error) {
	if ctx == nil {
		ctx = &LocContext{}
	}
	e := &evaluator{ctx: ctx, depth: depth}
	for _, v := range initial {
		e.push(stackValue{v: v})
	}
	if len(expr) == 0 {
		return Location{}, nil
	}
	if err := e.run(expr); err != nil {
		return Location{}, err
	}
	// A location ends with its last simple location, unless it was a
	// composite whose last operation was DW_OP_piece.
	if len(e.pieces) == 0 || e.state != stateMemory || len(e.stack) > 0 {
		p, err := e.finishPiece(0)
		if err != nil {
			return Location{}, err
		}
		if len(e.pieces) > 0 {
			if p.Kind == PieceUndefined {
				return Location{Pieces: e.pieces}, nil
			}
			return Location{}, errors.New("location ends with a simple location after DW_OP_piece")
		}
		e.pieces = append(e.pieces, p)
	}
	return Location{Pieces: e.pieces}, nil
}

// EvalAddress evaluates an expression for the single number it computes:
// the address of a memory location, the contents of a register location
// or a value. It is what DW_AT_frame_base, DW_AT_call_value and CFI
// expressions need.
func EvalAddress(expr []byte, ctx *LocContext) (uint64, error) {
	return evalAddress(expr, ctx, nil, 0)
}

func evalAddress(expr []byte, ctx *LocContext, initial []uint64, depth int) (uint64, error) {
	loc, err := evalLocation(expr, ctx, initial, depth)
	if err != nil {
		return 0, err
	}
	if len(loc.Pieces) != 1 {
		if len(loc.Pieces) == 0 {
			return 0, fmt.Errorf("empty expression: %w", ErrOptimizedOut)
		}
		return 0, fmt.Errorf("expression has %d pieces, want one value", len(loc.Pieces))
	}
	p := loc.Pieces[0]
	switch p.Kind {
	case PieceMemory:
		return p.Addr, nil
	case PieceRegister:
		if ctx == nil {
			return 0, fmt.Errorf("%s: no registers", RegName(uint64(p.Reg)))
		}
		return readReg(ctx.Regs, uint64(p.Reg))
	case PieceValue:
		var b [8]byte
		copy(b[:], p.Value)
		return binary.LittleEndian.Uint64(b[:]), nil
	case PieceUndefined:
		return 0, fmt.Errorf("expression: %w", ErrOptimizedOut)
	}
	return 0, fmt.Errorf("expression is a %s, not a value", p.Kind)
}

func readReg(regs *Regs, n uint64) (uint64, error) {
	if b, ok := xmmBytes(regs, n); ok {
		return binary.LittleEndian.Uint64(b), nil
	}
	if regs == nil || n >= NumRegs {
		return 0, fmt.Errorf("%s is not available", RegName(n))
	}
	if !regs.Valid[n] {
		return 0, fmt.Errorf("%s was not saved: %w", RegName(n), ErrOptimizedOut)
	}
	return regs.R[n], nil
}

func (e *evaluator) push(v stackValue) { e.stack = append(e.stack, v) }

func (e *evaluator) pop(op byte) (stackValue, error) {
	if len(e.stack) == 0 {
		return stackValue{}, fmt.Errorf("%s: stack underflow", opName(op))
	}
	v := e.stack[len(e.stack)-1]
	e.stack = e.stack[:len(e.stack)-1]
	return v, nil
}

func (e *evaluator) readMem(addr uint64, n int) ([]byte, error) {
	if e.ctx.Mem == nil {
		return nil, errors.New("no memory to read")
	}
	buf := make([]byte, n)
	if _, err := e.ctx.Mem.ReadAt(buf, addr); err != nil {
		return nil, fmt.Errorf("read %d bytes at %#x: %w", n, addr, err)
	}
	return buf, nil
}

func (e *evaluator) bias() uint64 {
	if e.ctx.Image == nil {
		return 0
	}
	return e.ctx.Image.Bias
}

// debugAddr reads entry idx of the CU's .debug_addr table (link-time).
func (e *evaluator) debugAddr(idx uint64) (uint64, error) {
	if e.ctx.Image == nil {
		return 0, errors.New("no image for .debug_addr")
	}
	return e.ctx.Image.debugAddr(e.ctx.AddrBase, idx)
}

func (img *Image) debugAddr(base, idx uint64) (uint64, error) {
	sec := godwarf.ParseAddr(img.Section(".debug_addr"))
	if sec == nil {
		return 0, fmt.Errorf("%s has no .debug_addr", img.Path)
	}
	v, err := sec.GetSubsection(base).Get(idx)
	if err != nil {
		return 0, fmt.Errorf(".debug_addr[%d] at base %#x: %w", idx, base, err)
	}
	return v, nil
}

// baseType reads the DW_TAG_base_type at a CU-relative offset; offset 0
// is the generic type (DW_OP_convert 0).
func (e *evaluator) baseType(off uint64) (*baseType, error) {
	if off == 0 {
		return nil, nil
	}
	if t, ok := e.types[off]; ok {
		return t, nil
	}
	ent, err := e.die(e.ctx.CUOffset + off)
	if err != nil {
		return nil, fmt.Errorf("base type at CU offset %#x: %w", off, err)
	}
	size, _ := ent.Val(dwarf.AttrByteSize).(int64)
	enc, _ := ent.Val(dwarf.AttrEncoding).(int64)
	if size <= 0 {
		return nil, fmt.Errorf("base type at CU offset %#x has no size", off)
	}
	t := &baseType{size: int(size), enc: int(enc)}
	if e.types == nil {
		e.types = map[uint64]*baseType{}
	}
	e.types[off] = t
	return t, nil
}

// die reads the DIE at a .debug_info offset of the context's image.
func (e *evaluator) die(off uint64) (*dwarf.Entry, error) {
	if e.ctx.Image == nil {
		return nil, errors.New("no image for DWARF references")
	}
	dw, err := e.ctx.Image.DWARF()
	if err != nil {
		return nil, err
	}
	r := dw.Reader()
	r.Seek(dwarf.Offset(off))
	ent, err := r.Next()
	if err != nil {
		return nil, fmt.Errorf("DIE at %#x: %w", off, err)
	}
	if ent == nil {
		return nil, fmt.Errorf("no DIE at %#x", off)
	}
	return ent, nil
}

func (e *evaluator) finishPiece(size int64) (Piece, error) {
	p := Piece{Size: size}
	switch e.state {
	case stateRegister:
		p.Kind, p.Reg = PieceRegister, e.reg
	case stateValue:
		v, err := e.pop(opStackValue)
		if err != nil {
			return p, err
		}
		p.Kind, p.Value = PieceValue, v.bytes()
	case stateImplicitValue:
		p.Kind, p.Value = PieceValue, e.value
	case stateImplicitPointer:
		p.Kind, p.ImplicitPtr, p.Offset = PieceImplicitPointer, e.ptrDIE, e.ptrOff
	default:
		if len(e.stack) == 0 {
			p.Kind = PieceUndefined
		} else {
			v, _ := e.pop(opPiece)
			p.Kind, p.Addr = PieceMemory, v.v
		}
	}
	// Each piece's simple location starts afresh.
	e.state, e.stack, e.value = stateMemory, e.stack[:0], nil
	return p, nil
}

// run executes the operations of expr on the evaluator's stack.
func (e *evaluator) run(expr []byte) error {
	r := &exprReader{b: expr}
	for r.off < len(expr) {
		e.steps++
		if e.steps > maxSteps {
			return errors.New("expression runs too long (a DW_OP_skip/bra loop?)")
		}
		at := r.off
		op := r.u8()
		if e.state != stateMemory && op != opPiece && op != opBitPiece && op != opNop && op != opGNUUninit {
			return fmt.Errorf("%s at byte %d follows a %s location without DW_OP_piece", opName(op), at, stateName(e.state))
		}
		if err := e.step(op, r); err != nil {
			return fmt.Errorf("%s at byte %d: %w", opName(op), at, err)
		}
		if r.err != nil {
			return fmt.Errorf("%s: %w", opName(op), r.err)
		}
	}
	return nil
}

func stateName(s locState) string {
	switch s {
	case stateRegister:
		return "register"
	case stateValue:
		return "DW_OP_stack_value"
	case stateImplicitValue:
		return "DW_OP_implicit_value"
	case stateImplicitPointer:
		return "DW_OP_implicit_pointer"
	}
	return "memory"
}

func (e *evaluator) step(op byte, r *exprReader) error {
	switch {
	case op >= opLit0 && op <= opLit31:
		e.push(stackValue{v: uint64(op - opLit0)})
		return nil
	case op >= opReg0 && op <= opReg31:
		e.state, e.reg = stateRegister, int(op-opReg0)
		return nil
	case op >= opBreg0 && op <= opBreg31:
		off := r.sleb()
		v, err := readReg(e.ctx.Regs, uint64(op-opBreg0))
		if err != nil {
			return err
		}
		e.push(stackValue{v: v + uint64(off)})
		return nil
	}
	switch op {
	case opNop, opGNUUninit:
		// DW_OP_GNU_uninit only marks the value as possibly uninitialised.
	case opAddr:
		e.push(stackValue{v: r.uint(8) + e.bias()})
	case opConst1u:
		e.push(stackValue{v: r.uint(1)})
	case opConst1s:
		e.push(stackValue{v: uint64(int64(int8(r.uint(1))))})
	case opConst2u:
		e.push(stackValue{v: r.uint(2)})
	case opConst2s:
		e.push(stackValue{v: uint64(int64(int16(r.uint(2))))})
	case opConst4u:
		e.push(stackValue{v: r.uint(4)})
	case opConst4s:
		e.push(stackValue{v: uint64(int64(int32(r.uint(4))))})
	case opConst8u, opConst8s:
		e.push(stackValue{v: r.uint(8)})
	case opConstu:
		e.push(stackValue{v: r.uleb()})
	case opConsts:
		e.push(stackValue{v: uint64(r.sleb())})
	case opAddrx, opGNUAddrIndex:
		a, err := e.debugAddr(r.uleb())
		if err != nil {
			return err
		}
		e.push(stackValue{v: a + e.bias()})
	case opConstx, opGNUConstIndex:
		// Not relocated: DW_OP_constx holds offsets such as TLS ones.
		a, err := e.debugAddr(r.uleb())
		if err != nil {
			return err
		}
		e.push(stackValue{v: a})
	case opDup:
		if len(e.stack) == 0 {
			return errors.New("stack underflow")
		}
		e.push(e.stack[len(e.stack)-1])
	case opDrop:
		if _, err := e.pop(op); err != nil {
			return err
		}
	case opOver:
		if len(e.stack) < 2 {
			return errors.New("stack underflow")
		}
		e.push(e.stack[len(e.stack)-2])
	case opPick:
		i := int(r.u8())
		if i >= len(e.stack) {
			return fmt.Errorf("index %d beyond stack of %d", i, len(e.stack))
		}
		e.push(e.stack[len(e.stack)-1-i])
	case opSwap:
		n := len(e.stack)
		if n < 2 {
			return errors.New("stack underflow")
		}
		e.stack[n-1], e.stack[n-2] = e.stack[n-2], e.stack[n-1]
	case opRot:
		n := len(e.stack)
		if n < 3 {
			return errors.New("stack underflow")
		}
		// The top entry moves to third place, the others up by one.
		e.stack[n-1], e.stack[n-2], e.stack[n-3] = e.stack[n-2], e.stack[n-3], e.stack[n-1]
	case opDeref, opDerefSize, opDerefType, opGNUDerefType:
		n := 8
		if op != opDeref {
			n = int(r.u8())
		}
		var t *baseType
		if op == opDerefType || op == opGNUDerefType {
			var err error
			if t, err = e.baseType(r.uleb()); err != nil {
				return err
			}
		}
		if r.err != nil {
			return r.err
		}
		if n < 1 || n > 16 {
			return fmt.Errorf("bad size %d", n)
		}
		a, err := e.pop(op)
		if err != nil {
			return err
		}
		b, err := e.readMem(a.v, n)
		if err != nil {
			return err
		}
		e.push(valueFromBytes(b, t))
	case opXderef, opXderefSize, opXderefType:
		return errors.New("address spaces are not supported on x86-64")
	case opAbs, opNeg, opNot:
		a, err := e.pop(op)
		if err != nil {
			return err
		}
		e.push(unary(op, a))
	case opAnd, opDiv, opMinus, opMod, opMul, opOr, opPlus, opShl, opShr, opShra, opXor,
		opEq, opGe, opGt, opLe, opLt, opNe:
		b, err := e.pop(op)
		if err != nil {
			return err
		}
		a, err := e.pop(op)
		if err != nil {
			return err
		}
		v, err := binaryOp(op, a, b)
		if err != nil {
			return err
		}
		e.push(v)
	case opPlusUconst:
		n := r.uleb()
		a, err := e.pop(op)
		if err != nil {
			return err
		}
		e.push(makeValue(a.t, a.v+n))
	case opSkip, opBra:
		off := int16(r.uint(2))
		if op == opBra {
			c, err := e.pop(op)
			if err != nil {
				return err
			}
			if c.v == 0 {
				return nil
			}
		}
		to := r.off + int(off)
		if to < 0 || to > len(r.b) {
			return fmt.Errorf("branch to byte %d outside the expression", to)
		}
		r.off = to
	case opRegx:
		e.state, e.reg = stateRegister, int(r.uleb())
	case opBregx:
		reg, off := r.uleb(), r.sleb()
		v, err := readReg(e.ctx.Regs, reg)
		if err != nil {
			return err
		}
		e.push(stackValue{v: v + uint64(off)})
	case opFbreg:
		off := r.sleb()
		if e.ctx.FrameBase == nil {
			return errors.New("no frame base")
		}
		fb, err := e.ctx.FrameBase()
		if err != nil {
			return fmt.Errorf("frame base: %w", err)
		}
		e.push(stackValue{v: fb + uint64(off)})
	case opCallFrameCFA:
		if e.ctx.CFA == 0 {
			return errors.New("the frame's CFA is unknown")
		}
		e.push(stackValue{v: e.ctx.CFA})
	case opPiece:
		p, err := e.finishPiece(int64(r.uleb()))
		if err != nil {
			return err
		}
		e.pieces = append(e.pieces, p)
	case opBitPiece:
		bits, off := r.uleb(), r.uleb()
		if bits%8 != 0 || off%8 != 0 {
			return fmt.Errorf("bit piece of %d bits at bit %d is not byte aligned: unsupported", bits, off)
		}
		p, err := e.finishPiece(int64(bits / 8))
		if err != nil {
			return err
		}
		switch p.Kind {
		case PieceMemory:
			p.Addr += off / 8
		case PieceImplicitPointer:
			if off != 0 {
				return errors.New("bit piece of an implicit pointer with an offset")
			}
		default:
			p.Offset = int64(off / 8)
		}
		e.pieces = append(e.pieces, p)
	case opStackValue:
		if len(e.stack) == 0 {
			return errors.New("stack underflow")
		}
		e.state = stateValue
	case opImplicitValue:
		n := r.uleb()
		e.value = append([]byte(nil), r.bytes(n)...)
		e.state = stateImplicitValue
	case opImplicitPointer, opGNUImplicitPointer:
		// The reference is a .debug_info offset in 32-bit DWARF (gcc and
		// clang emit nothing else on x86-64).
		e.ptrDIE = r.uint(4)
		e.ptrOff = r.sleb()
		e.state = stateImplicitPointer
	case opFormTLSAddress, opGNUPushTLSAddress:
		off, err := e.pop(op)
		if err != nil {
			return err
		}
		if e.ctx.TLSBase == nil {
			return errors.New("no thread-local storage base")
		}
		base, err := e.ctx.TLSBase()
		if err != nil {
			return fmt.Errorf("thread-local storage: %w", err)
		}
		e.push(stackValue{v: base + off.v})
	case opEntryValue, opGNUEntryValue:
		sub := r.bytes(r.uleb())
		if r.err != nil {
			return r.err
		}
		v, err := e.entryValue(sub)
		if err != nil {
			return err
		}
		e.push(stackValue{v: v})
	case opGNUParameterRef:
		off := r.uint(4)
		if e.ctx.EntryValue == nil {
			return fmt.Errorf("no caller to resolve the parameter: %w", ErrOptimizedOut)
		}
		// The resolver matches call-site parameters by absolute DIE offset.
		var sub [9]byte
		sub[0] = opGNUParameterRef
		binary.LittleEndian.PutUint64(sub[1:], e.ctx.CUOffset+off)
		v, err := e.ctx.EntryValue(sub[:])
		if err != nil {
			return err
		}
		e.push(stackValue{v: v})
	case opConstType, opGNUConstType:
		t, err := e.baseType(r.uleb())
		if err != nil {
			return err
		}
		b := r.bytes(uint64(r.u8()))
		if r.err != nil {
			return r.err
		}
		e.push(valueFromBytes(b, t))
	case opRegvalType, opGNURegvalType:
		reg := r.uleb()
		t, err := e.baseType(r.uleb())
		if err != nil {
			return err
		}
		v, err := readReg(e.ctx.Regs, reg)
		if err != nil {
			return err
		}
		if t != nil && t.size > 8 {
			return fmt.Errorf("%s as a %d-byte value: unsupported", RegName(reg), t.size)
		}
		e.push(makeValue(t, v))
	case opConvert, opGNUConvert, opReinterpret, opGNUReinterpret:
		t, err := e.baseType(r.uleb())
		if err != nil {
			return err
		}
		a, err := e.pop(op)
		if err != nil {
			return err
		}
		if op == opReinterpret || op == opGNUReinterpret {
			if a.wide != nil {
				e.push(valueFromBytes(a.wide, t))
			} else {
				e.push(makeValue(t, a.v))
			}
			break
		}
		v, err := convert(a, t)
		if err != nil {
			return err
		}
		e.push(v)
	case opCall2, opCall4, opCallRef:
		var off uint64
		switch op {
		case opCall2:
			off = e.ctx.CUOffset + r.uint(2)
		case opCall4:
			off = e.ctx.CUOffset + r.uint(4)
		default:
			off = r.uint(4)
		}
		return e.call(off)
	case opPushObjectAddress:
		if e.ctx.ObjectAddr == nil {
			return errors.New("no object address")
		}
		a, err := e.ctx.ObjectAddr()
		if err != nil {
			return fmt.Errorf("object address: %w", err)
		}
		e.push(stackValue{v: a})
	case opGNUVariableValue:
		v, err := e.variableValue(r.uint(4))
		if err != nil {
			return err
		}
		e.push(stackValue{v: v})
	default:
		return fmt.Errorf("unsupported DWARF expression opcode %#x (%s)", op, opName(op))
	}
	return nil
}

// call runs the DW_AT_location of the DIE at off on the current stack
// (DW_OP_call2, DW_OP_call4, DW_OP_call_ref).
func (e *evaluator) call(off uint64) error {
	if e.depth >= maxDepth {
		return errors.New("calls nest too deeply")
	}
	ent, err := e.die(off)
	if err != nil {
		return err
	}
	f := ent.AttrField(dwarf.AttrLocation)
	if f == nil {
		return nil // a DIE without a location is a no-op
	}
	expr, err := e.exprOf(f)
	if err != nil {
		return fmt.Errorf("location of DIE %#x: %w", off, err)
	}
	e.depth++
	defer func() { e.depth-- }()
	return e.run(expr)
}

// exprOf returns the expression of an attribute of a DIE in the
// context's CU, at the frame's pc.
func (e *evaluator) exprOf(f *dwarf.Field) ([]byte, error) {
	if b, ok := f.Val.([]byte); ok {
		return b, nil
	}
	if e.ctx.Image == nil || e.ctx.Regs == nil {
		return nil, errors.New("no image or pc for a location list")
	}
	cu, err := e.ctx.Image.unitEntry(e.ctx.CUOffset)
	if err != nil {
		return nil, err
	}
	return e.ctx.Image.LocationExpr(f, cu, e.ctx.Regs.PC())
}

// variableValue implements DW_OP_GNU_variable_value: the value of the
// variable at a .debug_info offset (gcc uses it for VLA bounds).
func (e *evaluator) variableValue(off uint64) (uint64, error) {
	if e.depth >= maxDepth {
		return 0, errors.New("variable values nest too deeply")
	}
	ent, err := e.die(off)
	if err != nil {
		return 0, err
	}
	if c, ok := ent.Val(dwarf.AttrConstValue).(int64); ok {
		return uint64(c), nil
	}
	f := ent.AttrField(dwarf.AttrLocation)
	if f == nil {
		return 0, fmt.Errorf("variable at %#x has no location: %w", off, ErrOptimizedOut)
	}
	expr, err := e.exprOf(f)
	if err != nil {
		return 0, err
	}
	size := int64(8)
	if to, ok := ent.Val(dwarf.AttrType).(dwarf.Offset); ok {
		if te, err := e.die(uint64(to)); err == nil {
			if s, ok := te.Val(dwarf.AttrByteSize).(int64); ok && s > 0 && s <= 8 {
				size = s
			}
		}
	}
	loc, err := evalLocation(expr, e.ctx, nil, e.depth+1)
	if err != nil {
		return 0, err
	}
	v := ReadLocation(loc, size, e.ctx.Mem, e.ctx.Regs)
	if v.Optimized {
		return 0, fmt.Errorf("variable at %#x: %w", off, ErrOptimizedOut)
	}
	b := v.Bytes
	if v.InMem {
		if b, err = e.readMem(v.Addr, int(size)); err != nil {
			return 0, err
		}
	}
	if v.Err != nil {
		return 0, v.Err
	}
	var buf [8]byte
	copy(buf[:], b)
	return binary.LittleEndian.Uint64(buf[:]), nil
}
