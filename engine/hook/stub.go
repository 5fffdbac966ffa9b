package hook

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
)

// The sites the hook serves: system call instructions of two shapes.
//
// A call number loaded into eax right before the syscall, as most of
// glibc's wrappers do (ShapeMov):
//
//	b8 NN NN NN NN   mov $nr, %eax
//	0f 05            syscall
//
// Only the mov is replaced, by a jmp to the site's stub: the syscall
// instruction stays, so that code jumping to it directly still makes the
// call (traced).
//
// A syscall followed by the check of its result, where the number comes
// in eax from code the site cannot see (read's xor %eax,%eax, the
// syscall() function's mov %rdi,%rax) (ShapeCmp):
//
//	0f 05                  syscall
//	48 3d NN NN NN NN      cmp $imm32, %rax
//
// Both instructions are replaced by a jmp to the stub and a 3-byte nop;
// the stub makes the call through the hook, does the cmp (its flags are
// what the code after reads) and jumps back after it. Nothing jumps
// between the two (rr patches the same shapes, for the same reason).

// cmpGlibc is the immediate of glibc's (and its loader's) check of a
// result, cmp $-4096,%rax; cmpGo that of Go's (internal/runtime/syscall's
// Syscall6, through which the syscall package and os make their calls)
// and of glibc's syscall(), cmp $-4095,%rax. A Go thread in the hook is
// on the hook's stack, not its goroutine's, as in a patched vDSO
// function: a signal (Go's preemption, the profiler's) finds a pc outside
// Go's code there and leaves the thread be.
const (
	cmpGlibc = 0xfffff000
	cmpGo    = 0xfffff001
)

// Shape is the shape of a site.
type Shape int

// The shapes.
const (
	ShapeMov Shape = iota + 1
	ShapeCmp
)

// Site is a system call site the hook serves.
type Site struct {
	Shape Shape
	RIP   uint64 // the address after the syscall instruction
	Nr    uint32 // ShapeMov: the call number the mov loads
	Cmp   uint32 // ShapeCmp: the cmp's immediate
}

// The code FindSite reads around a site's rip: SiteBefore bytes before it
// (the mov and the syscall), and the cmp after, SiteCode in all.
const (
	SiteBefore   = 7
	SiteCode     = SiteBefore + cmpLen
	movLen       = 5
	cmpLen       = 6
	cmpJumpBytes = 2 + cmpLen // syscall and cmp
)

// StubLen is the size of a stub; stubs are laid out StubLen apart.
const StubLen = 96

// StubPages is how many pages of stubs the recorder maps at a time (one
// injected mmap, where a process's loader and libc fill two pages).
const StubPages = 4

// PackPages names n pages of stubs mapped at addr (a page boundary) in one
// number, as a HookPatch's Page and a hook site event's Value hold them;
// PagesOf reads it back (a number from before StubPages is one page).
func PackPages(addr uint64, n int) uint64 { return addr | uint64(n-1) }

// MapStubPages maps n pages of stubs at addr (read and execute, not over
// anything) into the process of thread tid, stopped, with an injected
// mmap: what the kernel answered (addr, an address elsewhere from a kernel
// ignoring MAP_FIXED_NOREPLACE, or -errno). Record and replay map them
// alike.
func MapStubPages(tid int, m *ptrace.Mem, addr uint64, n int) (int64, error) {
	return ptrace.InjectSyscall(tid, m, unix.SYS_MMAP, addr, uint64(n)*4096, unix.PROT_READ|unix.PROT_EXEC,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED_NOREPLACE, ^uint64(0), 0)
}

// PagesOf returns the address and the number of pages PackPages named.
func PagesOf(v uint64) (addr uint64, n int) { return v &^ 0xfff, int(v&0xfff) + 1 }

// FindSite says whether code, the SiteCode bytes from rip-SiteBefore
// (rip the address after a syscall instruction made with call number nr),
// is a site the hook serves, and which. A mov of another number than the
// call's is not the call's number (a jump may land on the syscall).
func FindSite(code []byte, rip uint64, nr uint32) (Site, bool) {
	if len(code) < SiteCode || code[5] != 0x0f || code[6] != 0x05 {
		return Site{}, false
	}
	le := binary.LittleEndian
	if code[0] == 0xb8 && le.Uint32(code[1:]) == nr {
		return Site{Shape: ShapeMov, RIP: rip, Nr: nr}, true
	}
	if imm := le.Uint32(code[9:]); code[7] == 0x48 && code[8] == 0x3d && (imm == cmpGlibc || imm == cmpGo) {
		return Site{Shape: ShapeCmp, RIP: rip, Cmp: imm}, true
	}
	return Site{}, false
}

// Start is where the jump to the stub goes, and Len how many bytes of
// the program's code it replaces there.
func (s Site) Start() uint64 {
	if s.Shape == ShapeCmp {
		return s.RIP - 2
	}
	return s.RIP - 2 - movLen
}

// Len is the length of the code the patch replaces at Start.
func (s Site) Len() int {
	if s.Shape == ShapeCmp {
		return cmpJumpBytes
	}
	return movLen
}

// Stub returns the code of the site's stub at addr: it saves the
// program's rsp in the control page, moves to the hook's stack, loads eax
// (ShapeMov) and rcx (the address after the syscall, as the kernel leaves
// it), says which stub the call came through and jumps to Entry. The hook
// comes back to stubRet, the way back to the site (ShapeMov: a jump to
// the site's rip; ShapeCmp: the cmp, then a jump past it), or, for a call
// made traced, to stubTail: the stub's own syscall instruction, on the
// program's stack, rcx set as the site's syscall would, then the way back.
func (s Site) Stub(addr uint64) ([]byte, error) {
	le := binary.LittleEndian
	b := make([]byte, 0, StubLen)
	b = append(b, 0x48, 0x89, 0x24, 0x25) // mov %rsp, abs32
	b = le.AppendUint32(b, Ctl+ctlUserRSP)
	b = append(b, 0x48, 0xc7, 0xc4) // mov $imm32, %rsp
	b = le.AppendUint32(b, StackTop)
	if s.Shape == ShapeMov {
		b = append(b, 0xb8) // mov $nr, %eax
		b = le.AppendUint32(b, s.Nr)
	} else {
		b = append(b, 0x0f, 0x1f, 0x44, 0x00, 0x00) // nop: eax holds the number
	}
	b = append(b, 0x48, 0xb9) // movabs $rip, %rcx (stubRIP)
	b = le.AppendUint64(b, s.RIP)
	b = append(b, 0x49, 0xbb) // movabs $addr, %r11
	b = le.AppendUint64(b, addr)
	b = append(b, 0x4c, 0x89, 0x1c, 0x25) // mov %r11, abs32
	b = le.AppendUint32(b, Ctl+ctlStub)
	b = append(b, 0x49, 0xbb) // movabs $Entry, %r11
	b = le.AppendUint64(b, Entry)
	b = append(b, 0x41, 0xff, 0xe3) // jmp *%r11
	if len(b) != stubRet {
		panic("hook: stub layout")
	}
	back := s.RIP
	if s.Shape == ShapeCmp {
		b = append(b, 0x48, 0x3d) // cmp $imm32, %rax
		b = le.AppendUint32(b, s.Cmp)
		back += cmpLen
	}
	d := int64(back - (addr + uint64(len(b)) + 5))
	if d != int64(int32(d)) {
		return nil, fmt.Errorf("hook: the stub at %#x is out of a jump's reach of the site at %#x", addr, s.RIP)
	}
	b = append(b, 0xe9) // jmp back
	b = le.AppendUint32(b, uint32(int32(d)))
	for len(b) < stubTail {
		b = append(b, 0xcc)
	}
	b = append(b, 0x0f, 0x05) // syscall
	// rcx as the hook's way back leaves it: the site's rip (the kernel
	// left the stub's), so that a call the hook recorded and replay makes
	// again (ReplayTraced) leaves the registers it left when recorded.
	b = append(b, 0x48, 0xb9) // movabs $rip, %rcx
	b = le.AppendUint64(b, s.RIP)
	b = append(b, 0xeb, 0x100+stubRet-(stubTail+14)) // jmp stubRet (rel8, back)
	for len(b) < StubLen {
		b = append(b, 0xcc)
	}
	return b, nil
}

// stubRIP is the offset of the site's rip in a stub (the movabs to rcx),
// stubRet that of the way back to the site, stubTail that of the syscall
// that makes a call traced (layout.h's STUB_RET and STUB_TAIL).
const (
	stubRIP  = 22
	stubRet  = 61
	stubTail = 72
)

// TracedRIP says whether rip is the address after a stub's own syscall
// instruction: a call the hook had made traced.
func TracedRIP(rip uint64) bool {
	return (rip&0xfff)%StubLen == stubTail+2
}

// OnProgramStack says whether pc, in a stub, is where the thread runs
// on the program's stack with its own registers: before the stub saved
// its rsp, and from the way back on.
func OnProgramStack(pc uint64) bool {
	off := (pc & 0xfff) % StubLen
	return off < 8 || off >= stubRet
}

// Resume is where a thread that stands at the site's rip (at the exit of
// its syscall) goes on once the site is patched with its stub at stub:
// the site's rip for ShapeMov, whose syscall stays, the stub's way back
// (the cmp) for ShapeCmp, whose jump covers the rip.
func (s Site) Resume(stub uint64) uint64 {
	if s.Shape == ShapeCmp {
		return stub + stubRet
	}
	return s.RIP
}

// Covers says whether the patch of the site covers rip, the rip of a
// thread after a syscall there: one that cannot be patched until that
// thread has left.
func (s Site) Covers(rip uint64) bool {
	return s.Shape == ShapeCmp && rip > s.Start() && rip < s.Start()+uint64(s.Len())
}

// Jump returns the bytes replacing the site's code at Start: a jmp to
// the stub at stub (and, for ShapeCmp, a nop).
func (s Site) Jump(stub uint64) ([]byte, error) {
	from := s.Start() + 5
	d := int64(stub - from)
	if d != int64(int32(d)) {
		return nil, fmt.Errorf("hook: the stub at %#x is out of a jump's reach of the site at %#x", stub, s.RIP)
	}
	b := binary.LittleEndian.AppendUint32([]byte{0xe9}, uint32(int32(d)))
	if s.Shape == ShapeCmp {
		b = append(b, 0x0f, 0x1f, 0x00) // nop
	}
	return b, nil
}

// PatchedSite returns where the jump of the patched site whose syscall
// ends at rip starts, judged from the program's own code there (what a
// debugger reads): a mov of the number before the syscall is a ShapeMov
// site. (FindSite takes a mov of another number than the call's for
// ShapeCmp when a cmp follows; no compiler makes such a site.)
func PatchedSite(mem Memory, rip uint64) uint64 {
	var b [SiteBefore]byte
	if _, err := mem.ReadAt(b[:], rip-SiteBefore); err == nil && b[0] == 0xb8 {
		return rip - 2 - movLen
	}
	return rip - 2
}
