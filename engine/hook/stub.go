package hook

import (
	"encoding/binary"
	"fmt"
)

// A site the hook serves is a call number loaded into eax right before the
// syscall instruction, as glibc's wrappers do:
//
//	b8 NN NN NN NN   mov $nr, %eax
//	0f 05            syscall
//
// Only the mov is replaced, by a jmp to the site's stub: the syscall
// instruction stays, so that code jumping to it directly still makes the
// call (traced).

// SiteLen is the length of the instructions a patched site replaces.
const SiteLen = 5

// StubLen is the size of a stub; stubs are laid out StubLen apart.
const StubLen = 48

// MatchSite says whether code, the bytes ending at rip (the address after
// a syscall instruction), are a site the hook serves, and its call number.
func MatchSite(code []byte) (nr uint32, ok bool) {
	if len(code) < SiteLen+2 {
		return 0, false
	}
	c := code[len(code)-SiteLen-2:]
	if c[0] != 0xb8 || c[5] != 0x0f || c[6] != 0x05 {
		return 0, false
	}
	return binary.LittleEndian.Uint32(c[1:]), true
}

// Stub returns the code of the stub at addr for the site whose syscall
// ends at rip, call nr: it saves the program's rsp in the control page,
// moves to the hook's stack, loads eax and rcx (the address after the
// syscall, as the kernel leaves it) and jumps to Entry, which returns to
// rip.
func Stub(rip uint64, nr uint32) []byte {
	le := binary.LittleEndian
	b := make([]byte, 0, StubLen)
	b = append(b, 0x48, 0x89, 0x24, 0x25) // mov %rsp, abs32
	b = le.AppendUint32(b, Ctl+ctlUserRSP)
	b = append(b, 0x48, 0xc7, 0xc4) // mov $imm32, %rsp
	b = le.AppendUint32(b, StackTop)
	b = append(b, 0xb8) // mov $nr, %eax
	b = le.AppendUint32(b, nr)
	b = append(b, 0x48, 0xb9) // movabs $rip, %rcx
	b = le.AppendUint64(b, rip)
	b = append(b, 0x49, 0xbb) // movabs $Entry, %r11
	b = le.AppendUint64(b, Entry)
	b = append(b, 0x41, 0xff, 0xe3) // jmp *%r11
	for len(b) < StubLen {
		b = append(b, 0xcc)
	}
	return b
}

// SiteJump returns the bytes replacing the site's mov, at rip-7: a jmp
// to the stub at stub.
func SiteJump(rip, stub uint64) ([]byte, error) {
	from := rip - 2 // the end of the jmp, where the syscall starts
	d := int64(stub - from)
	if d != int64(int32(d)) {
		return nil, fmt.Errorf("hook: the stub at %#x is out of a jump's reach of the site at %#x", stub, rip)
	}
	return binary.LittleEndian.AppendUint32([]byte{0xe9}, uint32(int32(d))), nil
}
