package patch

import (
	"errors"

	"golang.org/x/arch/x86/x86asm"
)

// errUndecodable says the bytes are no x86-64 instruction this package
// knows: the sweep that met them has lost the instruction boundaries.
var errUndecodable = errors.New("undecodable instruction")

// maxInsnLen is the architectural limit of an x86 instruction.
const maxInsnLen = 15

// decodeLen returns the length of the instruction at the start of b.
//
// It is insnLen, not x86asm: x86asm (v0.32) rejects valid encodings that
// compiled code is full of (endbr64 at every function's start, the other hint
// nops of 0f 18-1f, rdseed, rdpkru, rdpid) and decodes vzeroupper (c5 f8 77)
// with a ModRM byte it does not have, one or two bytes too long, which loses
// the boundaries for the rest of an AVX function. x86asm judges whether
// bytes are a defined instruction instead (validInsn). The tests check
// insnLen against x86asm over whole libraries (every instruction x86asm
// decodes otherwise) and against objdump.
func decodeLen(b []byte) (int, error) {
	return insnLen(b)
}

// validInsn says whether the instruction b (measured by insnLen) exists:
// x86asm knows which opcodes and ModRM forms are defined, which the length
// rules alone do not (ff /7 has a length and no meaning), so it judges the
// bytes between known functions, where data can hide. The valid encodings
// it rejects are accepted here by name: endbr64/endbr32 and the other hint
// nops of 0f 18-1f, rdseed, rdpid, rdpkru and wrpkru.
func validInsn(b []byte) bool {
	if in, err := x86asm.Decode(b, 64); err == nil && in.Op != 0 {
		return true
	}
	i := 0
	for i < len(b) && (isLegacyPrefix(b[i]) || b[i]&0xf0 == 0x40) {
		i++
	}
	op := b[i:]
	switch {
	case len(op) >= 2 && op[0] == 0x0f && op[1] >= 0x18 && op[1] <= 0x1f:
		return true // hint nops, endbr
	case len(op) == 3 && op[0] == 0x0f && op[1] == 0xc7 && op[2]>>6 == 3 && (op[2]>>3)&7 == 7:
		return true // rdseed, rdpid
	case len(op) == 3 && op[0] == 0x0f && op[1] == 0x01 && (op[2] == 0xee || op[2] == 0xef):
		return true // rdpkru, wrpkru
	}
	return false
}

// Operand-size flags of insnLen.
const (
	immByte  = 1 // an 8-bit immediate
	immWord  = 2 // a 16-bit immediate
	immFull  = 3 // 16 or 32 bits (operand size)
	immFull8 = 4 // 16, 32 or 64 bits (mov r, imm: REX.W makes it 64)
	immEnter = 5 // enter: 16 + 8 bits
	immMoffs = 6 // an address: 64 bits, 32 with 0x67
	hasModRM = 0x10
	invalid  = 0x80
)

// oneByte describes the one-byte opcode map in 64-bit mode: whether a ModRM
// byte follows and what immediate. Prefixes and escapes are handled before
// the table is consulted.
var oneByte = func() (t [256]uint8) {
	for op := 0; op < 0x40; op += 8 {
		// The ALU rows: op r/m,r (x4), op al,imm8, op eAX,imm.
		t[op], t[op+1], t[op+2], t[op+3] = hasModRM, hasModRM, hasModRM, hasModRM
		t[op+4], t[op+5] = immByte, immFull
	}
	for _, op := range []int{0x06, 0x07, 0x0e, 0x16, 0x17, 0x1e, 0x1f, 0x27, 0x2f, 0x37, 0x3f,
		0x60, 0x61, 0x82, 0x9a, 0xce, 0xd4, 0xd5, 0xd6, 0xea} {
		t[op] = invalid
	}
	t[0x63] = hasModRM
	t[0x68], t[0x69], t[0x6a], t[0x6b] = immFull, hasModRM|immFull, immByte, hasModRM|immByte
	for op := 0x70; op < 0x80; op++ {
		t[op] = immByte // jcc rel8
	}
	t[0x80], t[0x81], t[0x83] = hasModRM|immByte, hasModRM|immFull, hasModRM|immByte
	for op := 0x84; op < 0x90; op++ {
		t[op] = hasModRM
	}
	for op := 0xa0; op < 0xa4; op++ {
		t[op] = immMoffs
	}
	t[0xa8], t[0xa9] = immByte, immFull
	for op := 0xb0; op < 0xb8; op++ {
		t[op], t[op+8] = immByte, immFull8
	}
	t[0xc0], t[0xc1], t[0xc2] = hasModRM|immByte, hasModRM|immByte, immWord
	t[0xc6], t[0xc7], t[0xc8], t[0xca], t[0xcd] = hasModRM|immByte, hasModRM|immFull, immEnter, immWord, immByte
	for op := 0xd0; op < 0xd4; op++ {
		t[op] = hasModRM
	}
	for op := 0xd8; op < 0xe0; op++ {
		t[op] = hasModRM // x87
	}
	for op := 0xe0; op < 0xe8; op++ {
		t[op] = immByte // loop, jrcxz, in, out
	}
	t[0xe8], t[0xe9], t[0xeb] = immFull, immFull, immByte
	t[0xf6], t[0xf7], t[0xfe], t[0xff] = hasModRM, hasModRM, hasModRM, hasModRM
	return t
}()

// twoByte describes the 0f map like oneByte (0f 38 and 0f 3a are handled
// apart: always ModRM, and an 8-bit immediate for 0f 3a).
var twoByte = func() (t [256]uint8) {
	for op := range t {
		t[op] = hasModRM
	}
	for _, op := range []int{0x05, 0x06, 0x07, 0x08, 0x09, 0x0b, 0x0e, 0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x37,
		0x77, 0xa0, 0xa1, 0xa2, 0xa8, 0xa9, 0xaa} {
		t[op] = 0
	}
	for _, op := range []int{0x04, 0x0a, 0x0c, 0x24, 0x25, 0x26, 0x27, 0x36, 0x39, 0x3b, 0x3c, 0x3d, 0x3e, 0x3f,
		0x7a, 0x7b, 0xa6, 0xa7} {
		t[op] = invalid
	}
	for op := 0x80; op < 0x90; op++ {
		t[op] = immFull // jcc rel32
	}
	for op := 0xc8; op < 0xd0; op++ {
		t[op] = 0 // bswap
	}
	for _, op := range []int{0x0f, 0x70, 0x71, 0x72, 0x73, 0xa4, 0xac, 0xba, 0xc2, 0xc4, 0xc5, 0xc6} {
		t[op] = hasModRM | immByte
	}
	return t
}()

// insnLen returns the length of the x86-64 instruction at the start of b
// from the encoding rules alone: prefixes, REX, the VEX, EVEX and XOP
// escapes, the opcode maps' ModRM and immediate rules, SIB and
// displacements. It does not check that the instruction exists beyond the
// opcodes that are invalid in 64-bit mode.
func insnLen(b []byte) (int, error) {
	i := 0
	opsize16, addr32, rexW := false, false, false
	f2f3 := byte(0)
	for {
		if i >= len(b) || i >= maxInsnLen {
			return 0, errUndecodable
		}
		c := b[i]
		if isLegacyPrefix(c) {
			switch c {
			case 0x66:
				opsize16 = true
			case 0x67:
				addr32 = true
			case 0xf2, 0xf3:
				f2f3 = c
			}
			rexW = false // a REX counts only right before the opcode
			i++
			continue
		}
		if c&0xf0 == 0x40 {
			rexW = c&8 != 0
			i++
			continue
		}
		break
	}
	var flags uint8
	op := b[i]
	switch {
	case op == 0xc5 || op == 0xc4 || op == 0x62 || (op == 0x8f && i+1 < len(b) && b[i+1]&0x1f >= 8):
		return vexLen(b, i, addr32)
	case op == 0x0f:
		i++
		if i >= len(b) {
			return 0, errUndecodable
		}
		switch op2 := b[i]; op2 {
		case 0x38:
			i++
			flags = hasModRM
		case 0x3a:
			i++
			flags = hasModRM | immByte
		default:
			flags = twoByte[op2]
			switch {
			case op2 == 0x78 && (opsize16 || f2f3 == 0xf2):
				// extrq and insertq (SSE4a) take two 8-bit immediates.
				return modrmLen(b, i+1, addr32, 2)
			case op2 >= 0x20 && op2 <= 0x23:
				// mov to and from control and debug registers: the
				// ModRM byte names registers whatever its mod field.
				return fits(b, i+2)
			}
		}
	default:
		flags = oneByte[op]
	}
	if flags&invalid != 0 {
		return 0, errUndecodable
	}
	i++ // the opcode byte
	imm := 0
	switch flags & 0x0f {
	case immByte:
		imm = 1
	case immWord:
		imm = 2
	case immFull:
		imm = 4
		if opsize16 && !rexW {
			imm = 2
		}
	case immFull8:
		imm = 4
		if rexW {
			imm = 8
		} else if opsize16 {
			imm = 2
		}
	case immEnter:
		imm = 3
	case immMoffs:
		imm = 8
		if addr32 {
			imm = 4
		}
	}
	if op == 0xf6 || op == 0xf7 {
		// test r/m, imm is /0 (and /1); the other members have no immediate.
		if i < len(b) && (b[i]>>3)&7 <= 1 {
			if op == 0xf6 {
				imm = 1
			} else if opsize16 && !rexW {
				imm = 2
			} else {
				imm = 4
			}
		}
	}
	if flags&hasModRM == 0 {
		return fits(b, i+imm)
	}
	return modrmLen(b, i, addr32, imm)
}

func isLegacyPrefix(c byte) bool {
	switch c {
	case 0x66, 0x67, 0xf0, 0xf2, 0xf3, 0x2e, 0x36, 0x3e, 0x26, 0x64, 0x65:
		return true
	}
	return false
}

// vexLen measures an instruction with a VEX (c4, c5), EVEX (62) or XOP (8f)
// escape at b[i]: its opcode map decides the immediate.
func vexLen(b []byte, i int, addr32 bool) (int, error) {
	var mmap byte
	switch b[i] {
	case 0xc5:
		mmap, i = 1, i+2
	case 0xc4, 0x8f:
		if i+1 >= len(b) {
			return 0, errUndecodable
		}
		mmap, i = b[i+1]&0x1f, i+3
	case 0x62:
		if i+1 >= len(b) {
			return 0, errUndecodable
		}
		mmap, i = b[i+1]&0x07, i+4
	}
	if i >= len(b) {
		return 0, errUndecodable
	}
	op := b[i]
	i++
	imm := 0
	switch mmap {
	case 1: // the 0f map
		switch op {
		case 0x77:
			return fits(b, i) // vzeroupper, vzeroall: no ModRM
		case 0x70, 0x71, 0x72, 0x73, 0xc2, 0xc4, 0xc5, 0xc6:
			imm = 1
		}
	case 2, 5, 6, 9: // 0f 38, the AVX512-FP16 maps, XOP map 9
	case 3, 8: // 0f 3a, XOP map 8
		imm = 1
	case 0x0a: // XOP map 10
		imm = 4
	default:
		return 0, errUndecodable
	}
	return modrmLen(b, i, addr32, imm)
}

// modrmLen measures the rest of an instruction from its ModRM byte at b[i]:
// SIB, displacement, then imm bytes of immediate.
func modrmLen(b []byte, i int, addr32 bool, imm int) (int, error) {
	_ = addr32 // 32-bit addressing in 64-bit mode keeps the 64-bit ModRM/SIB forms
	if i >= len(b) {
		return 0, errUndecodable
	}
	modrm := b[i]
	i++
	mod, rm := modrm>>6, modrm&7
	if mod != 3 && rm == 4 {
		if i >= len(b) {
			return 0, errUndecodable
		}
		sib := b[i]
		i++
		if mod == 0 && sib&7 == 5 {
			i += 4
		}
	}
	switch {
	case mod == 1:
		i++
	case mod == 2:
		i += 4
	case mod == 0 && rm == 5:
		i += 4 // rip-relative
	}
	return fits(b, i+imm)
}

// fits checks that an instruction of n bytes is within b and the limit.
func fits(b []byte, n int) (int, error) {
	if n > len(b) || n > maxInsnLen {
		return 0, errUndecodable
	}
	return n, nil
}
