package dwarf

// DWARF expression opcodes and the reader of their operands: the
// vocabulary the expression machine (op.go) and the location-list
// reader (loclists.go) share. Every read is bounds-checked, since the
// debug information of any binary is untrusted input.

import (
	"fmt"
)

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
	v, _, _ := r.leb()
	return v
}

func (r *exprReader) sleb() int64 {
	v, shift, neg := r.leb()
	if neg && shift < 64 {
		v |= ^uint64(0) << shift
	}
	return int64(v)
}

// leb reads the bits of a LEB128 number, how many it has (a multiple of
// 7) and whether the last group's sign bit is set. A number cut short
// fails the reader and yields the bits read, unextended.
func (r *exprReader) leb() (v uint64, shift uint, neg bool) {
	for {
		if r.off >= len(r.b) {
			r.fail()
			return v, shift, false
		}
		c := r.b[r.off]
		r.off++
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			return v, shift, c&0x40 != 0
		}
	}
}
