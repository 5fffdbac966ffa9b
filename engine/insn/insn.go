// Package insn answers the few questions about x86-64 instructions that the
// recorder and the replayer ask when they stop a thread in the middle of
// its code: may it be single-stepped without changing what the program
// sees, and may it be moved elsewhere (under a jump to a trampoline) and
// still do the same thing.
//
// Both sides must answer alike from the same bytes: the recorder picks
// points the replayer can patch, and the replayer decides on its own,
// from its memory, whether it patches or falls back to a breakpoint.
package insn

import (
	"bytes"
	"encoding/binary"

	"golang.org/x/arch/x86/x86asm"
)

// MaxLen is the longest x86 instruction.
const MaxLen = 15

// JumpLen is the length of the jmp rel32 that replaces a patched
// instruction.
const JumpLen = 5

// Movable describes an instruction that can be executed somewhere else than
// where it is: it does not branch and does not trap, and the only thing in
// it that depends on its address is a 32-bit rip-relative displacement.
type Movable struct {
	// Len is the instruction's length (at least JumpLen).
	Len int
	// RelOff is the offset of its rip-relative displacement, -1 if none.
	RelOff int
	// Branch is a relative branch the copy re-encodes (PlanPatchBranches).
	Branch BranchKind
}

// BranchKind tells the relative branches a counter's run may hold.
type BranchKind int

// The relative branches: a conditional jump (anywhere in a run), and a jump
// or a call (last in a run, as a return may be).
const (
	NoBranch BranchKind = iota
	BranchJcc
	BranchJmp
	BranchCall
)

// branch returns the relative branch at the start of code and where it
// goes (from is its address).
func branch(code []byte, from uint64) (Movable, uint64, bool) {
	var m Movable
	var rel int64
	switch {
	case len(code) >= 2 && code[0] >= 0x70 && code[0] <= 0x7f:
		m, rel = Movable{Len: 2, Branch: BranchJcc}, int64(int8(code[1]))
	case len(code) >= 6 && code[0] == 0x0f && code[1] >= 0x80 && code[1] <= 0x8f:
		m, rel = Movable{Len: 6, Branch: BranchJcc}, int64(int32(binary.LittleEndian.Uint32(code[2:])))
	case len(code) >= 2 && code[0] == 0xeb:
		m, rel = Movable{Len: 2, Branch: BranchJmp}, int64(int8(code[1]))
	case len(code) >= 5 && code[0] == 0xe9:
		m, rel = Movable{Len: 5, Branch: BranchJmp}, int64(int32(binary.LittleEndian.Uint32(code[1:])))
	case len(code) >= 5 && code[0] == 0xe8:
		m, rel = Movable{Len: 5, Branch: BranchCall}, int64(int32(binary.LittleEndian.Uint32(code[1:])))
	default:
		return Movable{}, 0, false
	}
	m.RelOff = -1
	return m, uint64(int64(from) + int64(m.Len) + rel), true
}

// PlanPatchBranches is PlanPatch for an arrival counter, whose run may
// also hold relative branches: conditional jumps anywhere, a jump or a
// call as its last instruction. The copies jump where they did; a call's
// copy pushes the original return address (so its callee returns after the
// run), without touching the flags.
func PlanPatchBranches(code []byte, at uint64) (Patch, bool) {
	return planRun(code, at, true)
}

// planRun plans the run at at: movable instructions, relative branches if
// branches says so, and a return that completes it.
func planRun(code []byte, at uint64, branches bool) (Patch, bool) {
	var p Patch
	for p.Len < JumpLen {
		m, ok := movable(code[p.Len:])
		if !ok && branches {
			if b, _, isBranch := branch(code[p.Len:], at+uint64(p.Len)); isBranch && (b.Branch == BranchJcc || p.Len+b.Len >= JumpLen) {
				m, ok = b, true
			}
		}
		if !ok {
			// A return ends a run that it completes: its copy returns
			// from the trampoline as it would have from here.
			if r, isRet := ret(code[p.Len:]); isRet && p.Len+r.Len >= JumpLen {
				m, ok = r, true
			}
		}
		if !ok {
			return Patch{}, false
		}
		p.Insns = append(p.Insns, m)
		p.Len += m.Len
	}
	return p.trapsAt(code, at)
}

// vexLike reports whether the first opcode byte after the legacy prefixes
// and REX starts a VEX, EVEX or XOP encoding, whose lengths x86asm does not
// always get right: such instructions are never moved.
func vexLike(code []byte) bool {
	for _, b := range code {
		switch {
		case b == 0x66 || b == 0x67 || b == 0xf0 || b == 0xf2 || b == 0xf3 ||
			b == 0x2e || b == 0x36 || b == 0x3e || b == 0x26 || b == 0x64 || b == 0x65:
			continue
		case b >= 0x40 && b <= 0x4f:
			continue
		}
		return b == 0xc4 || b == 0xc5 || b == 0x62 || b == 0x8f
	}
	return true
}

// unsteppable are the instructions a tracer must not single-step over:
// they enter the kernel (a system call, a trap the recorder handles as an
// event) or push the flags, which would then hold the trap flag of the
// single-step.
var unsteppable = map[x86asm.Op]bool{
	x86asm.SYSCALL: true, x86asm.SYSENTER: true, x86asm.SYSEXIT: true, x86asm.SYSRET: true,
	x86asm.INT: true, x86asm.INTO: true, x86asm.ICEBP: true, x86asm.UD0: true, x86asm.UD1: true, x86asm.UD2: true,
	x86asm.HLT: true, x86asm.RDTSC: true, x86asm.RDTSCP: true, x86asm.CPUID: true,
	x86asm.PUSHF: true, x86asm.PUSHFD: true, x86asm.PUSHFQ: true,
	x86asm.XBEGIN: true, x86asm.XEND: true, x86asm.XABORT: true,
}

// unmovable are instructions that change the flow of control or depend on
// where they run in ways a displacement fix cannot follow.
var unmovable = map[x86asm.Op]bool{
	x86asm.JMP: true, x86asm.LJMP: true, x86asm.CALL: true, x86asm.LCALL: true,
	x86asm.RET: true, x86asm.LRET: true, x86asm.IRET: true, x86asm.IRETD: true, x86asm.IRETQ: true,
	x86asm.LOOP: true, x86asm.LOOPE: true, x86asm.LOOPNE: true,
	x86asm.JCXZ: true, x86asm.JECXZ: true, x86asm.JRCXZ: true,
}

// stringOps are the string instructions a rep prefix repeats.
var stringOps = map[x86asm.Op]bool{
	x86asm.MOVSB: true, x86asm.MOVSW: true, x86asm.MOVSD: true, x86asm.MOVSQ: true,
	x86asm.STOSB: true, x86asm.STOSW: true, x86asm.STOSD: true, x86asm.STOSQ: true,
	x86asm.LODSB: true, x86asm.LODSW: true, x86asm.LODSD: true, x86asm.LODSQ: true,
	x86asm.SCASB: true, x86asm.SCASW: true, x86asm.SCASD: true, x86asm.SCASQ: true,
	x86asm.CMPSB: true, x86asm.CMPSW: true, x86asm.CMPSD: true, x86asm.CMPSQ: true,
	x86asm.INSB: true, x86asm.INSW: true, x86asm.INSD: true,
	x86asm.OUTSB: true, x86asm.OUTSW: true, x86asm.OUTSD: true,
}

// RepString reports whether the instruction at the start of code is a
// string instruction with a rep prefix. Such an instruction is interrupted
// and single-stepped one iteration at a time, its rip unchanged: a thread
// stopped there may be in the middle of it, a state that a breakpoint or a
// jump at its address (which only fire at its start) never finds again. It
// is never a preemption point, and never moved.
func RepString(code []byte) bool {
	in := decode(code)
	if in == nil || !stringOps[in.Op] {
		return false
	}
	for _, b := range code[:in.Len] {
		switch {
		case b == 0xf2 || b == 0xf3:
			return true
		case b == 0x66 || b == 0x67 || b == 0xf0 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x26 || b == 0x64 || b == 0x65,
			b >= 0x40 && b <= 0x4f:
			continue
		}
		return false
	}
	return false
}

// decode decodes the instruction at the start of code (nil if it is not
// one the package vouches for).
func decode(code []byte) *x86asm.Inst {
	if len(code) == 0 || vexLike(code) {
		return nil
	}
	in, err := x86asm.Decode(code, 64)
	if err != nil || in.Op == 0 || in.Len == 0 || in.Len > len(code) {
		return nil
	}
	return &in
}

// Steppable reports whether the instruction at the start of code may be
// single-stepped by a tracer that wants it to do exactly what it does when
// the program runs freely (and without a system call going unseen).
func Steppable(code []byte) bool {
	in := decode(code)
	if in == nil {
		// Not decoded (a VEX instruction, say): stepping it is still
		// safe unless it is one of the kernel entries above, which are
		// all legacy encodings.
		return len(code) > 0 && vexLike(code)
	}
	return !unsteppable[in.Op] && code[0] != 0xcc
}

// movable reports whether the instruction at the start of code can run
// somewhere else once its rip-relative displacement is adjusted.
func movable(code []byte) (Movable, bool) {
	in := decode(code)
	if in == nil || unmovable[in.Op] || unsteppable[in.Op] || code[0] == 0xcc || RepString(code) {
		return Movable{}, false
	}
	for _, a := range in.Args {
		if _, ok := a.(x86asm.Rel); ok {
			return Movable{}, false // a relative branch (jcc, xbegin…)
		}
	}
	m := Movable{Len: in.Len, RelOff: -1}
	if in.PCRel != 0 {
		if in.PCRel != 4 || in.PCRelOff+4 > in.Len {
			return Movable{}, false
		}
		m.RelOff = in.PCRelOff
	}
	return m, true
}

// CanMove reports whether the instruction at the start of code can be
// replaced by a jmp rel32 to a copy of it elsewhere (see Move).
func CanMove(code []byte) (Movable, bool) {
	m, ok := movable(code)
	if !ok || m.Len < JumpLen {
		return Movable{}, false
	}
	return m, true
}

// Patch is a run of consecutive instructions, the first at the patched
// address, long enough together to be replaced by a jmp rel32 to copies of
// them. Loops compiled without optimisation are made of 4-byte
// instructions: a single one rarely has room for the jump.
//
// A branch to an instruction of the run other than the first would land in
// the jump's displacement (or in the padding after it). The padding is int3,
// and the displacement is chosen (by where the copies go) so that its byte at
// each such boundary is one that traps at once (TrapByte): such a branch
// then stops the thread at that boundary instead of running stray bytes, and
// the replayer puts the original code back and looks for the point with a
// breakpoint instead.
type Patch struct {
	Insns []Movable
	Len   int // the run's length, at least JumpLen
	// Prologue: the run starts with a frame prologue, whose second
	// instruction needs no trap byte (see framePrologue).
	Prologue bool
}

// TrapBoundaries are the boundaries whose displacement byte must trap.
func (p Patch) TrapBoundaries() []int {
	var out []int
	for _, b := range p.Boundaries() {
		if b != 1 || !p.Prologue {
			out = append(out, b)
		}
	}
	return out
}

// Boundaries are the offsets of the run's instructions after the first.
func (p Patch) Boundaries() []int {
	var out []int
	off := 0
	for _, m := range p.Insns[:len(p.Insns)-1] {
		off += m.Len
		out = append(out, off)
	}
	return out
}

// PlanPatch finds the run of instructions at the start of code (the bytes
// at address at, at least MaxLen+JumpLen of them when available) to patch.
// It fails if an instruction cannot be moved, or if a boundary falls on a
// byte of the jump's displacement that no position of the copies makes a
// trapping one (the low 12 bits of the displacement are set by at, since
// the copies go in a page of their own).
func PlanPatch(code []byte, at uint64) (Patch, bool) {
	return planRun(code, at, false)
}

// trapsAt completes a run planned at at: it fails if a boundary falls on a
// byte of the jump's displacement that no position of the copies makes a
// trapping one.
func (p Patch) trapsAt(code []byte, at uint64) (Patch, bool) {
	fixed := -(at + JumpLen) // the displacement modulo the page size
	p.Prologue = bytes.HasPrefix(code, framePrologue)
	for _, b := range p.TrapBoundaries() {
		switch b {
		case 1:
			if !TrapByte(byte(fixed)) {
				return Patch{}, false
			}
		case 2:
			if !trapNibble(byte(fixed>>8) & 0xf) {
				return Patch{}, false
			}
		}
	}
	return p, true
}

// framePrologue is push %rbp; mov %rsp,%rbp: the start of a function with
// a frame pointer (every function at -O0). No compiler branches to its
// second instruction, so that boundary of a run needs no trap byte.
var framePrologue = []byte{0x55, 0x48, 0x89, 0xe5}

// ret returns the length of a near return at the start of code.
func ret(code []byte) (Movable, bool) {
	in := decode(code)
	if in == nil || in.Op != x86asm.RET || in.Len != 1 {
		return Movable{}, false
	}
	return Movable{Len: 1, RelOff: -1}, true
}

// trapBytes are the first bytes of instructions that fault or trap at once
// in 64-bit mode, whatever follows: int3, int1, hlt (a general protection
// fault in user mode), and opcodes invalid in 64-bit mode. EVEX (0x62) and
// VEX (0xc4, 0xc5), invalid in 32-bit mode only, are not among them.
var trapBytes = [256]bool{
	0xcc: true, 0xf1: true, 0xf4: true,
	0x06: true, 0x07: true, 0x0e: true, 0x16: true, 0x17: true, 0x1e: true, 0x1f: true,
	0x27: true, 0x2f: true, 0x37: true, 0x3f: true, 0x60: true, 0x61: true, 0x82: true,
	0x9a: true, 0xce: true, 0xd4: true, 0xd5: true, 0xd6: true, 0xea: true,
}

// TrapByte reports whether an instruction starting with b faults or traps
// before doing anything.
func TrapByte(b byte) bool { return trapBytes[b] }

// TrapAfter reports whether a thread that executed trap byte b stands after
// it (int3, int1: traps) rather than on it (faults).
func TrapAfter(b byte) bool { return b == 0xcc || b == 0xf1 }

// trapNibble reports whether some trap byte has low nibble n.
func trapNibble(n byte) bool {
	for b := 0; b < 256; b++ {
		if trapBytes[b] && byte(b)&0xf == n {
			return true
		}
	}
	return false
}

// Move returns the instruction at the start of code (described by m), as it
// must be written at address to so that it does what it does at address
// from: its rip-relative displacement adjusted. ok is false if the target
// is out of reach of a 32-bit displacement from to.
func Move(code []byte, m Movable, from, to uint64) ([]byte, bool) {
	if m.Branch != NoBranch {
		return moveBranch(code, m, from, to)
	}
	out := append([]byte(nil), code[:m.Len]...)
	if m.RelOff < 0 {
		return out, true
	}
	disp := int64(int32(binary.LittleEndian.Uint32(out[m.RelOff:])))
	target := int64(from) + int64(m.Len) + disp
	nd := target - (int64(to) + int64(m.Len))
	if nd != int64(int32(nd)) {
		return nil, false
	}
	binary.LittleEndian.PutUint32(out[m.RelOff:], uint32(int32(nd)))
	return out, true
}

// moveBranch re-encodes the relative branch at from for a copy at to.
func moveBranch(code []byte, m Movable, from, to uint64) ([]byte, bool) {
	_, target, ok := branch(code, from)
	if !ok {
		return nil, false
	}
	rel32 := func(out []byte, end uint64) ([]byte, bool) {
		d := int64(target) - int64(end)
		if d != int64(int32(d)) {
			return nil, false
		}
		return binary.LittleEndian.AppendUint32(out, uint32(int32(d))), true
	}
	switch m.Branch {
	case BranchJcc:
		cc := code[0] & 0xf
		if code[0] == 0x0f {
			cc = code[1] & 0xf
		}
		return rel32([]byte{0x0f, 0x80 | cc}, to+6)
	case BranchJmp:
		return rel32([]byte{0xe9}, to+5)
	case BranchCall:
		// lea rsp,[rsp-8]; mov dword [rsp],lo; mov dword [rsp+4],hi;
		// jmp target: a call that returns to the original code.
		ret := from + uint64(m.Len)
		out := []byte{0x48, 0x8d, 0x64, 0x24, 0xf8, 0xc7, 0x04, 0x24}
		out = binary.LittleEndian.AppendUint32(out, uint32(ret))
		out = append(out, 0xc7, 0x44, 0x24, 0x04)
		out = binary.LittleEndian.AppendUint32(out, uint32(ret>>32))
		out = append(out, 0xe9)
		return rel32(out, to+uint64(len(out))+4)
	}
	return nil, false
}

// Target returns where the rip-relative operand of the instruction at from
// points, or where it branches (from itself if it has neither).
func Target(code []byte, m Movable, from uint64) uint64 {
	if m.Branch != NoBranch {
		_, target, _ := branch(code, from)
		return target
	}
	if m.RelOff < 0 {
		return from
	}
	disp := int64(int32(binary.LittleEndian.Uint32(code[m.RelOff:])))
	return uint64(int64(from) + int64(m.Len) + disp)
}

// Jump encodes a jmp rel32 at from to to (ok false if out of reach).
func Jump(from, to uint64) ([]byte, bool) {
	d := int64(to) - int64(from+JumpLen)
	if d != int64(int32(d)) {
		return nil, false
	}
	b := []byte{0xe9, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(b[1:], uint32(int32(d)))
	return b, true
}

// Flow says where a thread goes after the instruction at the start of code
// (at address at): next is the following instruction (0 after a jmp, ret
// or other unconditional transfer), target the destination of a relative
// jump or conditional branch (0 if none; calls are followed by their next
// instruction, not entered). ok is false for bytes the package does not
// decode.
func Flow(code []byte, at uint64) (next, target uint64, ok bool) {
	in := decode(code)
	if in == nil {
		return 0, 0, false
	}
	end := at + uint64(in.Len)
	for _, a := range in.Args {
		if r, isRel := a.(x86asm.Rel); isRel && in.Op != x86asm.CALL {
			target = uint64(int64(end) + int64(r))
		}
	}
	switch in.Op {
	case x86asm.JMP, x86asm.LJMP, x86asm.RET, x86asm.LRET, x86asm.IRET, x86asm.IRETD, x86asm.IRETQ,
		x86asm.UD0, x86asm.UD1, x86asm.UD2, x86asm.HLT:
		return 0, target, true
	}
	return end, target, true
}

// CallBefore reports whether the bytes before (those that end just before
// an address) end with a call instruction: the address is then a return
// address, an instruction boundary. A word of the stack that merely points
// into code may point into the middle of an instruction.
func CallBefore(before []byte) bool { return len(callLens(before)) > 0 }

// CallLenBefore returns the length of the call instruction the bytes
// before end with, to find the call a return address follows; 0 when no
// call or more than one (41 ff d0, call r8, ends with ff d0, call rax):
// a guess could put a breakpoint inside an instruction.
func CallLenBefore(before []byte) int {
	if ks := callLens(before); len(ks) == 1 {
		return ks[0]
	}
	return 0
}

// callLens returns the lengths of the call instructions the bytes before
// could end with.
func callLens(before []byte) []int {
	var ks []int
	for k := 2; k <= min(len(before), MaxLen); k++ {
		in := decode(before[len(before)-k:])
		if in != nil && in.Len == k && in.Op == x86asm.CALL {
			ks = append(ks, k)
		}
	}
	return ks
}
