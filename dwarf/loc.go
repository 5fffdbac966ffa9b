package dwarf

// This file evaluates DWARF expressions and location descriptions
// (DWARF 5 section 2.5 and 2.6) with the GNU extensions gcc emits, finds
// the expression of a location list valid at a pc, and resolves
// DW_OP_entry_value through the caller's call-site information as gdb does.

import (
	"debug/dwarf"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
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

// DWARF expression opcodes (DWARF 5 section 7.7.1 and the GNU extensions).
const (
	opAddr              = 0x03
	opDeref             = 0x06
	opConst1u           = 0x08
	opConst1s           = 0x09
	opConst2u           = 0x0a
	opConst2s           = 0x0b
	opConst4u           = 0x0c
	opConst4s           = 0x0d
	opConst8u           = 0x0e
	opConst8s           = 0x0f
	opConstu            = 0x10
	opConsts            = 0x11
	opDup               = 0x12
	opDrop              = 0x13
	opOver              = 0x14
	opPick              = 0x15
	opSwap              = 0x16
	opRot               = 0x17
	opXderef            = 0x18
	opAbs               = 0x19
	opAnd               = 0x1a
	opDiv               = 0x1b
	opMinus             = 0x1c
	opMod               = 0x1d
	opMul               = 0x1e
	opNeg               = 0x1f
	opNot               = 0x20
	opOr                = 0x21
	opPlus              = 0x22
	opPlusUconst        = 0x23
	opShl               = 0x24
	opShr               = 0x25
	opShra              = 0x26
	opXor               = 0x27
	opBra               = 0x28
	opEq                = 0x29
	opGe                = 0x2a
	opGt                = 0x2b
	opLe                = 0x2c
	opLt                = 0x2d
	opNe                = 0x2e
	opSkip              = 0x2f
	opLit0              = 0x30
	opLit31             = 0x4f
	opReg0              = 0x50
	opReg31             = 0x6f
	opBreg0             = 0x70
	opBreg31            = 0x8f
	opRegx              = 0x90
	opFbreg             = 0x91
	opBregx             = 0x92
	opPiece             = 0x93
	opDerefSize         = 0x94
	opXderefSize        = 0x95
	opNop               = 0x96
	opPushObjectAddress = 0x97
	opCall2             = 0x98
	opCall4             = 0x99
	opCallRef           = 0x9a
	opFormTLSAddress    = 0x9b
	opCallFrameCFA      = 0x9c
	opBitPiece          = 0x9d
	opImplicitValue     = 0x9e
	opStackValue        = 0x9f
	opImplicitPointer   = 0xa0
	opAddrx             = 0xa1
	opConstx            = 0xa2
	opEntryValue        = 0xa3
	opConstType         = 0xa4
	opRegvalType        = 0xa5
	opDerefType         = 0xa6
	opXderefType        = 0xa7
	opConvert           = 0xa8
	opReinterpret       = 0xa9

	opGNUPushTLSAddress  = 0xe0
	opGNUUninit          = 0xf0
	opGNUEncodedAddr     = 0xf1
	opGNUImplicitPointer = 0xf2
	opGNUEntryValue      = 0xf3
	opGNUConstType       = 0xf4
	opGNURegvalType      = 0xf5
	opGNUDerefType       = 0xf6
	opGNUConvert         = 0xf7
	opGNUReinterpret     = 0xf9
	opGNUParameterRef    = 0xfa
	opGNUAddrIndex       = 0xfb
	opGNUConstIndex      = 0xfc
	opGNUVariableValue   = 0xfd
)

var opNames = map[byte]string{
	opAddr: "DW_OP_addr", opDeref: "DW_OP_deref", opConst1u: "DW_OP_const1u", opConst1s: "DW_OP_const1s",
	opConst2u: "DW_OP_const2u", opConst2s: "DW_OP_const2s", opConst4u: "DW_OP_const4u", opConst4s: "DW_OP_const4s",
	opConst8u: "DW_OP_const8u", opConst8s: "DW_OP_const8s", opConstu: "DW_OP_constu", opConsts: "DW_OP_consts",
	opDup: "DW_OP_dup", opDrop: "DW_OP_drop", opOver: "DW_OP_over", opPick: "DW_OP_pick", opSwap: "DW_OP_swap",
	opRot: "DW_OP_rot", opXderef: "DW_OP_xderef", opAbs: "DW_OP_abs", opAnd: "DW_OP_and", opDiv: "DW_OP_div",
	opMinus: "DW_OP_minus", opMod: "DW_OP_mod", opMul: "DW_OP_mul", opNeg: "DW_OP_neg", opNot: "DW_OP_not",
	opOr: "DW_OP_or", opPlus: "DW_OP_plus", opPlusUconst: "DW_OP_plus_uconst", opShl: "DW_OP_shl",
	opShr: "DW_OP_shr", opShra: "DW_OP_shra", opXor: "DW_OP_xor", opBra: "DW_OP_bra", opEq: "DW_OP_eq",
	opGe: "DW_OP_ge", opGt: "DW_OP_gt", opLe: "DW_OP_le", opLt: "DW_OP_lt", opNe: "DW_OP_ne", opSkip: "DW_OP_skip",
	opRegx: "DW_OP_regx", opFbreg: "DW_OP_fbreg", opBregx: "DW_OP_bregx", opPiece: "DW_OP_piece",
	opDerefSize: "DW_OP_deref_size", opXderefSize: "DW_OP_xderef_size", opNop: "DW_OP_nop",
	opPushObjectAddress: "DW_OP_push_object_address", opCall2: "DW_OP_call2", opCall4: "DW_OP_call4",
	opCallRef: "DW_OP_call_ref", opFormTLSAddress: "DW_OP_form_tls_address", opCallFrameCFA: "DW_OP_call_frame_cfa",
	opBitPiece: "DW_OP_bit_piece", opImplicitValue: "DW_OP_implicit_value", opStackValue: "DW_OP_stack_value",
	opImplicitPointer: "DW_OP_implicit_pointer", opAddrx: "DW_OP_addrx", opConstx: "DW_OP_constx",
	opEntryValue: "DW_OP_entry_value", opConstType: "DW_OP_const_type", opRegvalType: "DW_OP_regval_type",
	opDerefType: "DW_OP_deref_type", opXderefType: "DW_OP_xderef_type", opConvert: "DW_OP_convert",
	opReinterpret: "DW_OP_reinterpret", opGNUPushTLSAddress: "DW_OP_GNU_push_tls_address",
	opGNUUninit: "DW_OP_GNU_uninit", opGNUEncodedAddr: "DW_OP_GNU_encoded_addr",
	opGNUImplicitPointer: "DW_OP_GNU_implicit_pointer", opGNUEntryValue: "DW_OP_GNU_entry_value",
	opGNUConstType: "DW_OP_GNU_const_type", opGNURegvalType: "DW_OP_GNU_regval_type",
	opGNUDerefType: "DW_OP_GNU_deref_type", opGNUConvert: "DW_OP_GNU_convert",
	opGNUReinterpret: "DW_OP_GNU_reinterpret", opGNUParameterRef: "DW_OP_GNU_parameter_ref",
	opGNUAddrIndex: "DW_OP_GNU_addr_index", opGNUConstIndex: "DW_OP_GNU_const_index",
	opGNUVariableValue: "DW_OP_GNU_variable_value",
}

func opName(op byte) string {
	switch {
	case op >= opLit0 && op <= opLit31:
		return fmt.Sprintf("DW_OP_lit%d", op-opLit0)
	case op >= opReg0 && op <= opReg31:
		return fmt.Sprintf("DW_OP_reg%d", op-opReg0)
	case op >= opBreg0 && op <= opBreg31:
		return fmt.Sprintf("DW_OP_breg%d", op-opBreg0)
	}
	if n, ok := opNames[op]; ok {
		return n
	}
	return fmt.Sprintf("DW_OP_%#x", op)
}

// The DW_ATE_* constants are in model.go, shared by the package.

// baseType is the type of a typed DWARF stack entry; nil stands for the
// generic type (an address-sized integer of unspecified signedness).
type baseType struct {
	size int
	enc  int
}

// stackValue is one entry of the DWARF stack. Values up to 8 bytes live in
// v (floats as their IEEE bits); wider typed constants (long double,
// __int128) keep their bytes in wide and can only be moved, not computed
// with.
type stackValue struct {
	v    uint64
	t    *baseType
	wide []byte
}

func (s stackValue) size() int {
	if s.t == nil {
		return 8
	}
	return s.t.size
}

func (s stackValue) isFloat() bool { return s.t != nil && s.t.enc == ATEFloat }

// signed says whether arithmetic treats the value as signed: the generic
// type is signed for division and comparisons, as gdb does (DWARF 5
// section 2.5.1.4 defines those operations as signed).
func (s stackValue) signed() bool {
	return s.t == nil || s.t.enc == ATESigned || s.t.enc == ATESignedChar
}

// int returns the value sign- or zero-extended from its size.
func (s stackValue) int() int64 {
	n := s.size()
	if n >= 8 || n <= 0 {
		return int64(s.v)
	}
	shift := uint(64 - 8*n)
	if s.signed() {
		return int64(s.v<<shift) >> shift
	}
	return int64(s.v << shift >> shift)
}

func (s stackValue) float() float64 {
	if !s.isFloat() {
		if s.signed() {
			return float64(s.int())
		}
		return float64(uint64(s.int()))
	}
	if s.size() == 4 {
		return float64(math.Float32frombits(uint32(s.v)))
	}
	return math.Float64frombits(s.v)
}

// makeValue builds a value of type t from the low bits of v.
func makeValue(t *baseType, v uint64) stackValue {
	if t != nil && t.size < 8 && t.size > 0 {
		v &= 1<<(8*uint(t.size)) - 1
	}
	return stackValue{v: v, t: t}
}

func makeFloat(t *baseType, f float64) stackValue {
	if t.size == 4 {
		return stackValue{v: uint64(math.Float32bits(float32(f))), t: t}
	}
	return stackValue{v: math.Float64bits(f), t: t}
}

// bytes returns the value's little-endian representation in its size.
func (s stackValue) bytes() []byte {
	if s.wide != nil {
		return append([]byte(nil), s.wide...)
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], s.v)
	n := s.size()
	if n > 8 {
		return append(b[:], make([]byte, n-8)...)
	}
	return b[:n]
}

// exprReader decodes the operands of an expression, remembering the first
// out-of-bounds read instead of panicking on truncated input.
type exprReader struct {
	b   []byte
	off int
	err error
}

func (r *exprReader) fail() {
	if r.err == nil {
		r.err = fmt.Errorf("truncated expression at byte %d", r.off)
	}
}

func (r *exprReader) u8() uint8 {
	if r.off >= len(r.b) {
		r.fail()
		return 0
	}
	r.off++
	return r.b[r.off-1]
}

func (r *exprReader) bytes(n uint64) []byte {
	if n > uint64(len(r.b)-r.off) {
		r.fail()
		r.off = len(r.b)
		return nil
	}
	b := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return b
}

func (r *exprReader) uint(n int) uint64 {
	b := r.bytes(uint64(n))
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// uleb and sleb are not delve's leb128 decoders: those panic on a value
// cut short, and the debug information of any binary is untrusted input.
func (r *exprReader) uleb() uint64 {
	var v uint64
	var shift uint
	for {
		if r.off >= len(r.b) {
			r.fail()
			return v
		}
		c := r.b[r.off]
		r.off++
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			return v
		}
	}
}

func (r *exprReader) sleb() int64 {
	var v int64
	var shift uint
	for {
		if r.off >= len(r.b) {
			r.fail()
			return v
		}
		c := r.b[r.off]
		r.off++
		if shift < 64 {
			v |= int64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
}

// locState is how the current simple location ends: on the stack (memory,
// the default), in a register, as a value, or as an implicit pointer.
type locState int

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

// valueFromBytes makes a typed value from little-endian bytes.
func valueFromBytes(b []byte, t *baseType) stackValue {
	if len(b) > 8 {
		var v [8]byte
		copy(v[:], b)
		return stackValue{v: binary.LittleEndian.Uint64(v[:]), t: t, wide: append([]byte(nil), b...)}
	}
	var v [8]byte
	copy(v[:], b)
	return makeValue(t, binary.LittleEndian.Uint64(v[:]))
}

func unary(op byte, a stackValue) stackValue {
	if a.isFloat() {
		f := a.float()
		switch op {
		case opAbs:
			return makeFloat(a.t, math.Abs(f))
		case opNeg:
			return makeFloat(a.t, -f)
		}
	}
	switch op {
	case opAbs:
		if a.signed() && a.int() < 0 {
			return makeValue(a.t, uint64(-a.int()))
		}
		return a
	case opNeg:
		return makeValue(a.t, uint64(-a.int()))
	}
	return makeValue(a.t, ^a.v)
}

func boolValue(b bool) stackValue {
	if b {
		return stackValue{v: 1}
	}
	return stackValue{}
}

// binaryOp applies an arithmetic, logical or comparison operation. The
// operands should share a type; when one is generic the other's type wins.
func binaryOp(op byte, a, b stackValue) (stackValue, error) {
	if a.wide != nil || b.wide != nil {
		return stackValue{}, errors.New("arithmetic on values wider than 8 bytes is unsupported")
	}
	t := a.t
	if t == nil {
		t = b.t
	}
	if a.isFloat() || b.isFloat() {
		if !a.isFloat() {
			t = b.t
		}
		x, y := a.float(), b.float()
		switch op {
		case opPlus:
			return makeFloat(t, x+y), nil
		case opMinus:
			return makeFloat(t, x-y), nil
		case opMul:
			return makeFloat(t, x*y), nil
		case opDiv:
			return makeFloat(t, x/y), nil
		case opEq:
			return boolValue(x == y), nil
		case opNe:
			return boolValue(x != y), nil
		case opLt:
			return boolValue(x < y), nil
		case opLe:
			return boolValue(x <= y), nil
		case opGt:
			return boolValue(x > y), nil
		case opGe:
			return boolValue(x >= y), nil
		}
		return stackValue{}, fmt.Errorf("%s on floating-point values", opName(op))
	}
	signed := a.signed()
	x, y := a.int(), b.int()
	ux, uy := uint64(x), uint64(y)
	if !signed {
		ux, uy = a.v, b.v
	}
	switch op {
	case opPlus:
		return makeValue(t, ux+uy), nil
	case opMinus:
		return makeValue(t, ux-uy), nil
	case opMul:
		return makeValue(t, ux*uy), nil
	case opAnd:
		return makeValue(t, ux&uy), nil
	case opOr:
		return makeValue(t, ux|uy), nil
	case opXor:
		return makeValue(t, ux^uy), nil
	case opDiv:
		if y == 0 {
			return stackValue{}, errors.New("division by zero")
		}
		if signed {
			return makeValue(t, uint64(x/y)), nil
		}
		return makeValue(t, ux/uy), nil
	case opMod:
		if y == 0 {
			return stackValue{}, errors.New("division by zero")
		}
		// Untyped DW_OP_mod is unsigned, as in gdb.
		if signed && a.t != nil {
			return makeValue(t, uint64(x%y)), nil
		}
		return makeValue(t, a.v%b.v), nil
	case opShl:
		if b.v >= 64 {
			return makeValue(t, 0), nil
		}
		return makeValue(t, a.v<<b.v), nil
	case opShr:
		if b.v >= 64 {
			return makeValue(t, 0), nil
		}
		return makeValue(t, a.v>>b.v), nil
	case opShra:
		s := b.v
		if s > 63 {
			s = 63
		}
		v := a.int()
		if a.t != nil && !a.signed() {
			// Arithmetic shift of an unsigned typed value still shifts in
			// its sign bit.
			n := uint(64 - 8*a.size())
			v = int64(a.v<<n) >> n
		}
		return makeValue(t, uint64(v>>s)), nil
	}
	var c bool
	if signed {
		switch op {
		case opEq:
			c = x == y
		case opNe:
			c = x != y
		case opLt:
			c = x < y
		case opLe:
			c = x <= y
		case opGt:
			c = x > y
		case opGe:
			c = x >= y
		}
	} else {
		switch op {
		case opEq:
			c = ux == uy
		case opNe:
			c = ux != uy
		case opLt:
			c = ux < uy
		case opLe:
			c = ux <= uy
		case opGt:
			c = ux > uy
		case opGe:
			c = ux >= uy
		}
	}
	return boolValue(c), nil
}

// convert implements DW_OP_convert: integer widths, integer and float.
func convert(a stackValue, t *baseType) (stackValue, error) {
	if a.wide != nil || (t != nil && t.size > 8) {
		return stackValue{}, errors.New("conversion of values wider than 8 bytes is unsupported")
	}
	toFloat := t != nil && t.enc == ATEFloat
	switch {
	case a.isFloat() && toFloat:
		return makeFloat(t, a.float()), nil
	case a.isFloat():
		f := a.float()
		if t != nil && !(t.enc == ATESigned || t.enc == ATESignedChar) {
			return makeValue(t, uint64(f)), nil
		}
		return makeValue(t, uint64(int64(f))), nil
	case toFloat:
		return makeFloat(t, a.float()), nil
	}
	return makeValue(t, uint64(a.int())), nil
}

// entryValue resolves DW_OP_entry_value. At the first instruction of a
// function the registers still hold their entry values, so the
// sub-expression is evaluated in place; elsewhere the caller's call site
// must tell.
func (e *evaluator) entryValue(sub []byte) (uint64, error) {
	if e.depth >= maxDepth {
		return 0, errors.New("entry values nest too deeply")
	}
	if e.atFunctionEntry() {
		return evalAddress(sub, e.ctx, nil, e.depth+1)
	}
	if e.ctx.EntryValue == nil {
		return 0, fmt.Errorf("no caller frame: %w", ErrOptimizedOut)
	}
	return e.ctx.EntryValue(sub)
}

// atFunctionEntry says whether the frame's pc is the first instruction of
// an ELF function (after an endbr64, which changes no register).
func (e *evaluator) atFunctionEntry() bool {
	if e.ctx.Regs == nil || !e.ctx.Regs.Valid[RegRIP] || e.ctx.Image == nil {
		return false
	}
	pc := e.ctx.Regs.PC()
	s, ok := e.ctx.Image.At(pc)
	if !ok || !s.Func {
		return false
	}
	if s.Addr == pc {
		return true
	}
	if pc == s.Addr+4 && e.ctx.Mem != nil {
		b, err := e.readMem(s.Addr, 4)
		return err == nil && string(b) == "\xf3\x0f\x1e\xfa"
	}
	return false
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

// unitHeader finds the header of the compilation unit whose DIE is at
// cuDIE: its .debug_info offset and DWARF version. Go's debug/dwarf hides
// both, but loclist forms and CU-relative references depend on them.
func (img *Image) unitHeader(cuDIE uint64) (hdr uint64, version int, err error) {
	info := img.Section(".debug_info")
	le := binary.LittleEndian
	// DWARF 5: unit_length(4) version(2) unit_type(1) address_size(1)
	// debug_abbrev_offset(4).
	if cuDIE >= 12 && cuDIE <= uint64(len(info)) {
		h := info[cuDIE-12:]
		if v := le.Uint16(h[4:]); v == 5 && h[7] == 8 {
			return cuDIE - 12, 5, nil
		}
	}
	// DWARF 2-4: unit_length(4) version(2) debug_abbrev_offset(4)
	// address_size(1).
	if cuDIE >= 11 && cuDIE <= uint64(len(info)) {
		h := info[cuDIE-11:]
		if v := le.Uint16(h[4:]); v >= 2 && v <= 4 && h[10] == 8 {
			return cuDIE - 11, int(v), nil
		}
	}
	return 0, 0, fmt.Errorf("no 32-bit DWARF unit header before the CU DIE at %#x in %s", cuDIE, img.DebugPath)
}

// unitEntry returns the CU DIE of the unit whose header is at hdr.
func (img *Image) unitEntry(hdr uint64) (*dwarf.Entry, error) {
	dw, err := img.DWARF()
	if err != nil {
		return nil, err
	}
	info := img.Section(".debug_info")
	if hdr+6 > uint64(len(info)) {
		return nil, fmt.Errorf("unit header %#x beyond .debug_info", hdr)
	}
	die := hdr + 11
	if binary.LittleEndian.Uint16(info[hdr+4:]) >= 5 {
		die = hdr + 12
	}
	r := dw.Reader()
	r.Seek(dwarf.Offset(die))
	e, err := r.Next()
	if err != nil || e == nil {
		return nil, fmt.Errorf("compilation unit at %#x: %v", hdr, err)
	}
	return e, nil
}

// UnitContext returns a context with the compilation unit's parts set:
// Image, AddrBase and CUOffset. The caller adds the frame's registers,
// CFA, frame base, memory and resolvers.
func (img *Image) UnitContext(cu *dwarf.Entry) (LocContext, error) {
	ctx := LocContext{Image: img}
	hdr, _, err := img.unitHeader(uint64(cu.Offset))
	if err != nil {
		return ctx, err
	}
	ctx.CUOffset = hdr
	ctx.AddrBase = cuAddrBase(cu)
	return ctx, nil
}

// Attributes debug/dwarf does not name.
const (
	attrGNUAddrBase         = dwarf.Attr(0x2133)
	attrGNUCallSiteValue    = dwarf.Attr(0x2111)
	attrGNUCallSiteDataVal  = dwarf.Attr(0x2112)
	attrCallDataValue       = dwarf.Attr(0x86)
	tagGNUCallSite          = dwarf.Tag(0x4109)
	tagGNUCallSiteParameter = dwarf.Tag(0x410a)
)

func cuAddrBase(cu *dwarf.Entry) uint64 {
	for _, a := range []dwarf.Attr{dwarf.AttrAddrBase, attrGNUAddrBase} {
		if v, ok := cu.Val(a).(int64); ok {
			return uint64(v)
		}
	}
	return 8 // after the .debug_addr header of the first unit
}

// LocationExpr returns the location expression of a DIE attribute valid
// at run-time pc: the exprloc itself, or the matching entry of a location
// list (.debug_loc for DWARF 2-4, .debug_loclists for DWARF 5, including
// DW_FORM_loclistx through the CU's DW_AT_loclists_base), chosen as gdb
// chooses it (see locListReader.find): an entry with an empty range at pc
// holds where pc is the entry of the function it is in, as the arguments
// of a call inlined there have. It returns ErrOptimizedOut when no entry
// holds at pc; an empty expression means the same for the caller of
// EvalLocation.
func (img *Image) LocationExpr(field *dwarf.Field, cu *dwarf.Entry, pc uint64) ([]byte, error) {
	if field == nil {
		return nil, fmt.Errorf("no location attribute: %w", ErrOptimizedOut)
	}
	switch field.Class {
	case dwarf.ClassExprLoc, dwarf.ClassBlock:
		b, _ := field.Val.([]byte)
		return b, nil
	case dwarf.ClassLocListPtr, dwarf.ClassLocList:
	default:
		return nil, fmt.Errorf("%v is a %v, not a location", field.Attr, field.Class)
	}
	if cu == nil {
		return nil, errors.New("location list without its compilation unit")
	}
	// Offsets come as int64, DW_FORM_loclistx indexes as uint64.
	var off uint64
	switch v := field.Val.(type) {
	case int64:
		if v < 0 {
			return nil, fmt.Errorf("%v has a negative offset %d in %s", field.Attr, v, img.DebugPath)
		}
		off = uint64(v)
	case uint64:
		off = v
	default:
		return nil, fmt.Errorf("%v has an unexpected value %T", field.Attr, field.Val)
	}
	_, version, err := img.unitHeader(uint64(cu.Offset))
	if err != nil {
		return nil, err
	}
	base, _ := cu.Val(dwarf.AttrLowpc).(uint64)
	lr := &locListReader{version: version, addrSize: 8, base: base}
	if version < 5 && field.Class == dwarf.ClassLocListPtr {
		lr.data = img.Section(".debug_loc")
		if lr.data == nil {
			return nil, fmt.Errorf("%s has no .debug_loc", img.DebugPath)
		}
	} else {
		lr.version = 5
		lr.data = img.Section(".debug_loclists")
		if lr.data == nil {
			return nil, fmt.Errorf("%s has no .debug_loclists", img.DebugPath)
		}
		if field.Class == dwarf.ClassLocList {
			lb := uint64(12) // after the header of the first unit's table
			if v, ok := cu.Val(dwarf.AttrLoclistsBase).(int64); ok && v >= 0 {
				lb = uint64(v)
			}
			if off, err = loclistxOffset(lr.data, lb, off); err != nil {
				return nil, fmt.Errorf("location list of %v in %s: %w", field.Attr, img.DebugPath, err)
			}
		}
		addrBase := cuAddrBase(cu)
		lr.addr = func(idx uint64) (uint64, error) { return img.debugAddr(addrBase, idx) }
	}
	// gdb's rule for an empty range at pc: it holds where pc is the entry
	// of the function pc is in (block_linkage_function of block_for_pc:
	// the concrete function, also inside inlined calls).
	atEntry := func() bool {
		fn := img.concreteAt(pc)
		return fn != nil && fn.Low == pc
	}
	expr, found, err := lr.find(off, pc-img.Bias, atEntry)
	if err != nil {
		return nil, fmt.Errorf("location list of %v in %s: %w", field.Attr, img.DebugPath, err)
	}
	if !found {
		return nil, fmt.Errorf("no location at pc %#x: %w", pc, ErrOptimizedOut)
	}
	return expr, nil
}

// EntryValueResolver returns a function resolving DW_OP_entry_value for
// the frame called by caller, as gdb does: it finds, in the caller's
// function, the call site whose return address is caller.PC, then the call
// site parameter for the register (or parameter DIE) the sub-expression
// names, and evaluates its DW_AT_call_value (DW_AT_call_data_value for a
// dereferenced register) in the caller's frame. Entry values of the
// caller's own parameters are resolved through the frame above it.
func (t *Table) EntryValueResolver(caller *Frame, mem Memory) func(expr []byte) (uint64, error) {
	return func(expr []byte) (uint64, error) { return t.entryValue(caller, mem, expr, 0) }
}

// entryKind is what an entry value's sub-expression asks for.
type entryKind int

const (
	entryReg      entryKind = iota // DW_OP_regN: the register's value
	entryRegDeref                  // DW_OP_bregN 0; DW_OP_deref(_size): memory it pointed to
	entryParamRef                  // DW_OP_GNU_parameter_ref: a parameter DIE
)

func parseEntryExpr(expr []byte) (kind entryKind, reg uint64, derefSize int, err error) {
	r := &exprReader{b: expr}
	op := r.u8()
	switch {
	case op >= opReg0 && op <= opReg31 && len(expr) == 1:
		return entryReg, uint64(op - opReg0), 0, nil
	case op == opRegx:
		reg = r.uleb()
		if r.err == nil && r.off == len(expr) {
			return entryReg, reg, 0, nil
		}
	case op >= opBreg0 && op <= opBreg31 || op == opBregx:
		reg = uint64(op - opBreg0)
		if op == opBregx {
			reg = r.uleb()
		}
		if r.sleb() != 0 {
			break
		}
		switch r.u8() {
		case opDeref:
			derefSize = 8
		case opDerefSize:
			derefSize = int(r.u8())
		default:
			return 0, 0, 0, fmt.Errorf("unsupported entry value expression % x", expr)
		}
		if r.err == nil && r.off == len(expr) {
			return entryRegDeref, reg, derefSize, nil
		}
	case op == opGNUParameterRef && len(expr) == 9:
		return entryParamRef, binary.LittleEndian.Uint64(expr[1:]), 0, nil
	}
	return 0, 0, 0, fmt.Errorf("unsupported entry value expression % x", expr)
}

func (t *Table) entryValue(caller *Frame, mem Memory, expr []byte, depth int) (uint64, error) {
	if caller == nil {
		return 0, fmt.Errorf("no caller frame: %w", ErrOptimizedOut)
	}
	if depth >= maxDepth {
		return 0, errors.New("entry values nest too deeply")
	}
	kind, reg, derefSize, err := parseEntryExpr(expr)
	if err != nil {
		return 0, err
	}
	img := t.ImageAt(caller.PC)
	if img == nil {
		return 0, fmt.Errorf("caller pc %#x is in no image: %w", caller.PC, ErrOptimizedOut)
	}
	site, err := img.findCallSite(caller.PC)
	if err != nil {
		return 0, err
	}
	var value []byte
	for _, p := range site.params {
		switch kind {
		case entryParamRef:
			if p.param != reg {
				continue
			}
			value = p.value
		default:
			pk, preg, _, err := parseEntryExpr(p.loc)
			if err != nil || pk != entryReg || preg != reg {
				continue
			}
			value = p.value
			if kind == entryRegDeref {
				value = p.dataValue
			}
		}
		break
	}
	if value == nil {
		return 0, fmt.Errorf("call site at %#x does not pass %s: %w", caller.PC, RegName(reg), ErrOptimizedOut)
	}
	ctx, err := img.UnitContext(site.cu)
	if err != nil {
		return 0, err
	}
	ctx.Regs, ctx.CFA, ctx.Mem = &caller.Regs, caller.CFA, mem
	ctx.FrameBase = frameBaseFunc(img, site.fn, site.cu, caller, &ctx)
	ctx.EntryValue = func(sub []byte) (uint64, error) {
		// The caller's own entry values come from the frame above it.
		up := t.unwind(caller.Regs, mem, 2, false)
		if len(up) < 2 {
			return 0, fmt.Errorf("no frame above the caller: %w", ErrOptimizedOut)
		}
		return t.entryValue(&up[1], mem, sub, depth+1)
	}
	v, err := evalAddress(value, &ctx, nil, depth+1)
	if err != nil {
		return 0, fmt.Errorf("call site value at %#x: %w", caller.PC, err)
	}
	if kind == entryRegDeref && derefSize < 8 {
		v &= 1<<(8*uint(derefSize)) - 1
	}
	return v, nil
}

// frameBaseFunc evaluates a function's DW_AT_frame_base lazily in frame f.
func frameBaseFunc(img *Image, fn, cu *dwarf.Entry, f *Frame, ctx *LocContext) func() (uint64, error) {
	return func() (uint64, error) {
		if fn == nil {
			return 0, errors.New("no function for the frame base")
		}
		field := fn.AttrField(dwarf.AttrFrameBase)
		if field == nil {
			return 0, fmt.Errorf("function at %#x has no frame base", fn.Offset)
		}
		pc := f.PC
		if f.Level > 0 && pc > 0 {
			pc-- // a return address may be past the caller's last range
		}
		expr, err := img.LocationExpr(field, cu, pc)
		if err != nil {
			return 0, fmt.Errorf("frame base: %w", err)
		}
		c := *ctx
		c.FrameBase = nil
		return EvalAddress(expr, &c)
	}
}

type callSiteParam struct {
	loc       []byte // DW_AT_location: the register the argument is passed in
	param     uint64 // DW_AT_call_parameter: the callee's parameter DIE
	value     []byte // DW_AT_call_value
	dataValue []byte // DW_AT_call_data_value
}

type callSite struct {
	cu, fn *dwarf.Entry
	params []callSiteParam
}

// findCallSite finds the DW_TAG_call_site (or DW_TAG_GNU_call_site)
// returning to the run-time address ret.
func (img *Image) findCallSite(ret uint64) (*callSite, error) {
	dw, err := img.DWARF()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, ErrOptimizedOut)
	}
	link := ret - img.Bias
	r := dw.Reader()
	cu, err := r.SeekPC(link - 1)
	if err != nil {
		return nil, fmt.Errorf("no compilation unit at %#x: %w", ret, ErrOptimizedOut)
	}
	var fn *dwarf.Entry
	depth := 1
	for depth > 0 {
		e, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("reading the unit at %#x: %w", cu.Offset, err)
		}
		if e == nil {
			break
		}
		if e.Tag == 0 {
			depth--
			continue
		}
		switch e.Tag {
		case dwarf.TagSubprogram:
			if depth == 1 || fn == nil {
				rs, _ := codeRanges(dw, e)
				if !inRanges(rs, link-1) {
					if e.Children {
						r.SkipChildren()
					}
					continue
				}
				fn = e
			}
		case dwarf.TagCallSite, tagGNUCallSite:
			rp, ok := e.Val(dwarf.AttrCallReturnPC).(uint64)
			if !ok {
				rp, ok = e.Val(dwarf.AttrLowpc).(uint64)
			}
			if ok && rp == link {
				site := &callSite{cu: cu, fn: fn}
				if e.Children {
					site.params = readCallSiteParams(r)
				}
				return site, nil
			}
			if e.Children {
				r.SkipChildren()
			}
			continue
		}
		if e.Children {
			depth++
		}
	}
	return nil, fmt.Errorf("no call site information for return address %#x: %w", ret, ErrOptimizedOut)
}

func inRanges(rs [][2]uint64, pc uint64) bool {
	for _, r := range rs {
		if pc >= r[0] && pc < r[1] {
			return true
		}
	}
	return false
}

func readCallSiteParams(r *dwarf.Reader) []callSiteParam {
	var out []callSiteParam
	for {
		e, err := r.Next()
		if err != nil || e == nil || e.Tag == 0 {
			return out
		}
		if e.Tag == dwarf.TagCallSiteParameter || e.Tag == tagGNUCallSiteParameter {
			p := callSiteParam{}
			p.loc, _ = e.Val(dwarf.AttrLocation).([]byte)
			for _, a := range []dwarf.Attr{dwarf.AttrCallParameter, dwarf.AttrAbstractOrigin} {
				if o, ok := e.Val(a).(dwarf.Offset); ok {
					p.param = uint64(o)
				}
			}
			for _, a := range []dwarf.Attr{dwarf.AttrCallValue, attrGNUCallSiteValue} {
				if v, ok := e.Val(a).([]byte); ok {
					p.value = v
				}
			}
			for _, a := range []dwarf.Attr{attrCallDataValue, attrGNUCallSiteDataVal} {
				if v, ok := e.Val(a).([]byte); ok {
					p.dataValue = v
				}
			}
			out = append(out, p)
		}
		if e.Children {
			r.SkipChildren()
		}
	}
}

// xmmBytes returns SSE register n (a DWARF number) when regs has them.
func xmmBytes(regs *Regs, n uint64) ([]byte, bool) {
	if regs == nil || !regs.HaveXMM || n < RegXMM0 || n >= RegXMM0+16 {
		return nil, false
	}
	return regs.XMM[n-RegXMM0][:], true
}
