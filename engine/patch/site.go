// Package patch rewrites the code of a recorded program where an instruction
// would escape the recording, identically in recording and replay.
//
// Without CPUID faulting a program sees RDRAND and RDSEED in cpuid and runs
// them; nothing traps them, so each rdrand or rdseed found in executable
// memory is replaced by a ud2 of the same length: the recorder emulates it on
// the SIGILL and logs the value, replay injects it. There, cpuid is trapped
// so too (Space.Cpuid), so that its answers are recorded and the recording
// replays on another CPU. The vDSO's functions are
// replaced by stubs that make the real system call, so that clock reads are
// system calls the recorder sees.
//
// Replay must patch exactly the same sites: the algorithm depends only on the
// memory contents, the mapped files' bytes and the system call arguments,
// which replay reproduces. Version numbers the algorithm; a trace records the
// version it was made with.
package patch

import (
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Version is the patching algorithm's version. Change it whenever a change
// could patch other sites, so that replay can tell a trace made otherwise.
const Version = 1

// Op is an instruction the patcher traps.
type Op uint8

// The trapped instructions.
const (
	Rdrand Op = 1
	Rdseed Op = 2
)

// HookSite marks a system call site patched to jump to the hook page
// (engine/hook): not trapped, only remembered, so that the program's code
// reads as it was.
const HookSite Op = 3

// Cpuid is a cpuid trapped where the CPU cannot fault on it (no CPUID
// faulting): its answer is recorded on the SIGILL, as an rdrand's value
// is, so that the recording replays on another CPU (Space.Cpuid).
const Cpuid Op = 4

// Xgetbv is an xgetbv trapped as cpuid is: XCR0 says which register
// states the kernel enabled (AVX-512's, MPX's, PKRU's), which differs from
// one machine to another, and libraries choose their code by it (libgcc
// asks cpuid other questions once AVX-512's state is off). Nothing else
// traps it.
const Xgetbv Op = 5

func (o Op) String() string {
	switch o {
	case Xgetbv:
		return "xgetbv"
	case Rdseed:
		return "rdseed"
	case HookSite:
		return "hook site"
	case Cpuid:
		return "cpuid"
	}
	return "rdrand"
}

// Site is one patched instruction: its address, its original bytes and what
// it did.
type Site struct {
	Addr uint64
	Orig []byte
	Op   Op
	// Reg is the destination register (a trace.Regs index) and Size its
	// operand size in bytes (2, 4 or 8).
	Reg  int
	Size int
}

// gpr maps the x86 register numbers of a ModRM byte (with REX.B) to Regs.
var gpr = [16]int{trace.RAX, trace.RCX, trace.RDX, trace.RBX, trace.RSP, trace.RBP, trace.RSI, trace.RDI,
	trace.R8, trace.R9, trace.R10, trace.R11, trace.R12, trace.R13, trace.R14, trace.R15}

// randInsn recognizes an rdrand or rdseed of n bytes at the start of b:
// 0f c7 /6 or /7 with a register operand, after optional operand-size, REX
// and ignored segment prefixes. f3 0f c7 /7 is rdpid and f3 0f c7 /6
// senduipi, so f2 and f3 disqualify it, and lock makes it invalid.
func randInsn(b []byte, n int) (Site, bool) {
	if n > len(b) {
		return Site{}, false
	}
	size, rexB := 4, 0
	i := 0
	for ; i < n; i++ {
		c := b[i]
		switch {
		case c == 0x66:
			size = 2
		case c == 0x26 || c == 0x2e || c == 0x36 || c == 0x3e || c == 0x64 || c == 0x65 || c == 0x67:
		case c&0xf0 == 0x40 && i+1 < n && b[i+1] == 0x0f:
			if c&8 != 0 {
				size = 8
			}
			rexB = int(c&1) << 3
		default:
			goto opcode
		}
	}
	return Site{}, false
opcode:
	if i+3 != n || b[i] != 0x0f || b[i+1] != 0xc7 {
		return Site{}, false
	}
	modrm := b[i+2]
	if modrm>>6 != 3 {
		return Site{}, false
	}
	s := Site{Orig: append([]byte(nil), b[:n]...), Reg: gpr[int(modrm&7)|rexB], Size: size}
	switch (modrm >> 3) & 7 {
	case 6:
		s.Op = Rdrand
	case 7:
		s.Op = Rdseed
	default:
		return Site{}, false
	}
	return s, true
}

// cpuidInsn recognizes a cpuid of n bytes at the start of b: 0f a2, with no
// prefix (compilers and assemblers emit none).
func cpuidInsn(b []byte, n int) (Site, bool) {
	if n != 2 || len(b) < 2 || b[0] != 0x0f || b[1] != 0xa2 {
		return Site{}, false
	}
	return Site{Orig: []byte{0x0f, 0xa2}, Op: Cpuid}, true
}

// xgetbvInsn recognizes an xgetbv of n bytes at the start of b: 0f 01 d0,
// with no prefix.
func xgetbvInsn(b []byte, n int) (Site, bool) {
	if n != 3 || len(b) < 3 || b[0] != 0x0f || b[1] != 0x01 || b[2] != 0xd0 {
		return Site{}, false
	}
	return Site{Orig: []byte{0x0f, 0x01, 0xd0}, Op: Xgetbv}, true
}

// ud2 is the trap a site is replaced with, followed by nops to the site's
// length: the SIGILL it raises stops at the site's address, which tells it
// from the program's own ud2.
var ud2 = [2]byte{0x0f, 0x0b}

// Trap returns the bytes that replace the site.
func (s *Site) Trap() []byte {
	b := make([]byte, len(s.Orig))
	copy(b, ud2[:])
	for i := len(ud2); i < len(b); i++ {
		b[i] = 0x90
	}
	return b
}

// Truncate keeps the bits of v the instruction's operand size holds.
func (s *Site) Truncate(v uint64) uint64 {
	if s.Size == 8 {
		return v
	}
	return v & (1<<(8*s.Size) - 1)
}

// Arithmetic flags of rflags that rdrand and rdseed write.
const (
	flagCF = 1 << 0
	flagPF = 1 << 2
	flagAF = 1 << 4
	flagZF = 1 << 6
	flagSF = 1 << 7
	flagOF = 1 << 11
)

// Emulate sets regs as the instruction would have: the destination gets
// value (zero when it failed, as the CPU does), CF says whether it
// succeeded, the other arithmetic flags are cleared, a 32-bit destination
// is zero-extended and a 16-bit one keeps its upper bits, and rip moves
// past it. Recording and replay share it so that they cannot disagree.
func (s *Site) Emulate(regs *trace.Regs, value uint64, ok bool) {
	value = s.Truncate(value)
	if !ok {
		value = 0
	}
	switch s.Size {
	case 2:
		regs[s.Reg] = regs[s.Reg]&^0xffff | value
	default:
		regs[s.Reg] = value
	}
	regs[trace.EFLAGS] &^= flagCF | flagPF | flagAF | flagZF | flagSF | flagOF
	if ok {
		regs[trace.EFLAGS] |= flagCF
	}
	regs[trace.RIP] = s.Addr + uint64(len(s.Orig))
}
