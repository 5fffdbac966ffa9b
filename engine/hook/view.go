package hook

import (
	"bytes"
	"encoding/binary"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// Where a thread stopped inside the hook stands for the program: in the
// system call of the patched site, its registers those of the site. A
// debugger shows that (UserView), never the hook's own frames: the hook
// runs on its own stack, which no unwinder could walk back to the program.

// Memory is the memory of the thread's process.
type Memory interface {
	ReadAt(p []byte, addr uint64) (int, error)
}

// entryPushed is the offset after hook_entry's pushes (mov %rsp,%rdi),
// entryJump that of its return (jmp *CTL_RET into the stub), found in Image.
var entryPushed, entryJump = func() (uint64, uint64) {
	e := Entry - Base
	p := bytes.Index(Image[e:], []byte{0x48, 0x89, 0xe7})
	j := bytes.Index(Image[e:], binary.LittleEndian.AppendUint32([]byte{0xff, 0x24, 0x25}, Ctl+ctlRet)) // jmp *CTL_RET
	if p < 0 || j < 0 {
		panic("hook: hook.bin has no hook_entry")
	}
	return uint64(e + p), uint64(e + j)
}()

// savedRegs are the registers hook_entry pushes below StackTop, the first
// at StackTop-8 (struct frame of hook.c, from its end).
var savedRegs = [...]int{trace.EFLAGS, trace.RCX, trace.RDX, trace.RSI, trace.RDI, trace.R8, trace.R9, trace.R10,
	trace.RBX, trace.RBP, trace.R12, trace.R13, trace.R14, trace.R15}

// UserView turns regs, those of a thread of a recording made with the hook
// page (trace header's Hook), into the program's registers at the site the
// thread entered the hook from, when it stands in the hook's code or in a
// stub: rip after the site's syscall instruction, the program's stack
// pointer and the registers the call keeps. It reports whether it did.
func UserView(regs *trace.Regs, mem Memory) bool {
	pc := regs[trace.RIP]
	le := binary.LittleEndian
	var w [8]byte
	userRSP := func() bool {
		if _, err := mem.ReadAt(w[:], Ctl+ctlUserRSP); err != nil {
			return false
		}
		regs[trace.RSP] = le.Uint64(w[:])
		return true
	}
	if pc >= TrapCode && pc < Base+CodeSize {
		return trapCodeView(regs, mem)
	}
	if start, trap, n, ok := trapStubAt(mem, pc); ok {
		return trapStubView(regs, mem, start, trap, n)
	}
	if pc >= Base && pc < Base+CodeSize {
		off := pc - Base
		switch {
		case off == entryJump:
			// Everything is back but rip.
		case off >= Entry-Base && off < entryPushed:
			if !userRSP() {
				return false
			}
		default:
			var f [len(savedRegs) * 8]byte
			if _, err := mem.ReadAt(f[:], StackTop-uint64(len(f))); err != nil || !userRSP() {
				return false
			}
			for i, r := range savedRegs {
				regs[r] = le.Uint64(f[len(f)-8*(i+1):])
			}
		}
		regs[trace.RIP] = regs[trace.RCX]
		return true
	}
	// A stub: its slot in a page of them, recognised by its first bytes.
	page := pc &^ 0xfff
	start := page + (pc-page)/StubLen*StubLen
	var stub [StubLen]byte
	if _, err := mem.ReadAt(stub[:], start); err != nil {
		return false
	}
	if !bytes.Equal(stub[:4], []byte{0x48, 0x89, 0x24, 0x25}) || le.Uint32(stub[4:]) != Ctl+ctlUserRSP || stub[stubRIP-2] != 0x48 || stub[stubRIP-1] != 0xb9 {
		return false
	}
	// From its way back on, the thread runs on the program's stack again.
	if !OnProgramStack(pc) && !userRSP() {
		return false
	}
	regs[trace.RIP] = le.Uint64(stub[stubRIP:])
	return true
}

// trapStubView turns regs, of a thread in the stub of a patched trapping
// instruction (Trap.Stub) of the window at start whose instruction is trap
// bytes in, of n bytes, into the program's: the window's instruction the
// stub's stands for, and the program's rsp where the stub has moved to the
// trap stack.
func trapStubView(regs *trace.Regs, mem Memory, start uint64, trap, n int) bool {
	off := int((regs[trace.RIP] & 0xfff) % StubLen)
	pre := stubHeader + trap
	post := pre + trapMiddle(n)
	if onTrapStack(off, trap) && !trapRSP(regs, mem) {
		return false
	}
	switch {
	case off < stubHeader:
		regs[trace.RIP] = start
	case off < pre:
		regs[trace.RIP] = start + uint64(off-stubHeader)
	case off < post:
		regs[trace.RIP] = start + uint64(trap)
	default:
		// After the instruction: the window's instructions that follow
		// it, then the jump back to its end.
		regs[trace.RIP] = start + uint64(trap+n) + uint64(off-post)
	}
	return true
}

// trapRSP puts the program's rsp, kept in the control page while the
// thread runs on the trap stack, in regs.
func trapRSP(regs *trace.Regs, mem Memory) bool {
	var w [8]byte
	if _, err := mem.ReadAt(w[:], Ctl+ctlTrapRSP); err != nil {
		return false
	}
	regs[trace.RSP] = binary.LittleEndian.Uint64(w[:])
	return true
}

// trapCodeView turns regs, of a thread in the hook's code for patched
// trapping instructions (called from a stub), into the program's: standing
// at the instruction, its rsp the one the stub kept.
func trapCodeView(regs *trace.Regs, mem Memory) bool {
	start, trap, _, ok := trapCaller(mem)
	if ok && trapRSP(regs, mem) {
		regs[trace.RIP] = start + uint64(trap)
		return true
	}
	return false
}

// trapCaller finds the stub that called the hook's trap code: its window's
// start and instruction's offset, from the return address at the top of
// the trap stack.
func trapCaller(mem Memory) (start uint64, trap, n int, ok bool) {
	var w [8]byte
	if _, err := mem.ReadAt(w[:], TrapStackTop-8); err != nil {
		return 0, 0, 0, false
	}
	return trapStubAt(mem, binary.LittleEndian.Uint64(w[:]))
}

// PatchJump returns where the jump to the stub is that a thread with
// registers regs, standing in the hook's code or a stub, came through: the
// start of a patched cpuid's or rdtsc's window, or the jump of a system
// call site.
func PatchJump(regs trace.Regs, mem Memory) uint64 {
	pc := regs[trace.RIP]
	if pc >= TrapCode && pc < Base+CodeSize {
		start, _, _, _ := trapCaller(mem)
		return start
	}
	if start, _, _, ok := trapStubAt(mem, pc); ok {
		return start
	}
	UserView(&regs, mem)
	return PatchedSite(mem, regs[trace.RIP])
}
