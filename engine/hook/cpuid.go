package hook

import (
	"encoding/binary"
	"fmt"

	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Patched cpuid sites. Where the CPU traps cpuid (CPUID faulting), each one
// costs a ptrace stop, and a program's loader asks ~70 at every exec (its
// cache sizes, a subleaf at a time). The answers do not change during a
// recording, so the recorder writes them into the hook page once (a table
// the trace keeps, SetCpuid) and patches each cpuid that trapped, with the
// instructions around it (a patch.Window), into a jump to a stub that asks
// the hook: the same answers in replay, from the same table, with no event.
// A question the table has no answer for runs the real cpuid in the stub,
// which traps as before.
//
// A cpuid stub, in a slot of a stub page (StubLen bytes):
//
//	0   eb 0e            jmp over the header
//	2   "RWCP"           what the slot holds (UserView)
//	6   u64              the window's start
//	14  u8, u8           the window's length, the cpuid's offset in it
//	16  the window's instructions before the cpuid
//	    lea -0x80(%rsp),%rsp; mov $Cpuid,%ebx; call *%rbx
//	    lea 0x80(%rsp),%rsp; jmp post       (an answer)
//	    lea 0x80(%rsp),%rsp; cpuid          (none: cpuidMissSkip on)
//	post: the window's instructions after the cpuid; jmp to the window's end

// NrCpuid is the trace.HookPatch.Nr of a patched cpuid (no system call
// has that number).
const NrCpuid = 0xffffffff

// cpuidMagic marks a slot that holds a cpuid stub.
var cpuidMagic = [4]byte{'R', 'W', 'C', 'P'}

const cpuidHeader = 16

// cpuidMiddle is the length of a cpuid stub's code between the window's
// instructions before the cpuid and those after: the leas, the call, the
// way on after an answer, the real cpuid.
const cpuidMiddle = 5 + 5 + 2 + 8 + 2 + 8 + 2

// CpuidStub returns the code of the stub at addr for the window w, and the
// offset in it of the instructions after the cpuid, where a thread that
// stands after the cpuid inside the window goes on (CpuidResume).
func CpuidStub(addr uint64, w patch.Window) ([]byte, error) {
	le := binary.LittleEndian
	b := make([]byte, 0, StubLen)
	b = append(b, 0xeb, cpuidHeader-2)
	b = append(b, cpuidMagic[:]...)
	b = le.AppendUint64(b, w.Start)
	b = append(b, byte(len(w.Code)), byte(w.Trap))
	b = append(b, w.Code[:w.Trap]...)
	b = append(b, 0x48, 0x8d, 0x64, 0x24, 0x80) // lea -0x80(%rsp),%rsp
	b = append(b, 0xbb)                         // mov $Cpuid, %ebx
	b = le.AppendUint32(b, Cpuid)
	b = append(b, 0xff, 0xd3) // call *%rbx
	leaUp := []byte{0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00}
	b = append(b, leaUp...)
	b = append(b, 0xeb, byte(len(leaUp)+2)) // jmp post
	b = append(b, leaUp...)
	b = append(b, 0x0f, 0xa2) // cpuid
	if len(b) != cpuidHeader+w.Trap+cpuidMiddle {
		panic("hook: cpuid stub layout")
	}
	b = append(b, w.Code[w.Trap+w.Len:]...)
	d := int64(w.End() - (addr + uint64(len(b)) + 5))
	if d != int64(int32(d)) {
		return nil, fmt.Errorf("hook: the stub at %#x is out of a jump's reach of the cpuid at %#x", addr, w.Start+uint64(w.Trap))
	}
	b = append(b, 0xe9)
	b = le.AppendUint32(b, uint32(int32(d)))
	if len(b) > StubLen {
		return nil, fmt.Errorf("hook: the cpuid window at %#x needs a stub of %d bytes", w.Start, len(b))
	}
	for len(b) < StubLen {
		b = append(b, 0xcc)
	}
	return b, nil
}

// CpuidResume is where a thread standing at rip goes on once the window w
// is patched with its stub at stub: rip itself unless rip is inside the
// window, past its cpuid (a thread that has just trapped there), where it
// goes to the same instruction in the stub.
func CpuidResume(w patch.Window, stub, rip uint64) uint64 {
	after := w.Start + uint64(w.Trap+w.Len)
	if rip < after || rip >= w.End() {
		return rip
	}
	post := uint64(cpuidHeader + w.Trap + cpuidMiddle)
	return stub + post + (rip - after)
}

// CpuidJump returns the bytes replacing the window's code: a jmp to the
// stub, then int3s (nothing jumps there).
func CpuidJump(w patch.Window, stub uint64) ([]byte, error) {
	d := int64(stub - (w.Start + 5))
	if d != int64(int32(d)) {
		return nil, fmt.Errorf("hook: the stub at %#x is out of a jump's reach of the cpuid at %#x", stub, w.Start+uint64(w.Trap))
	}
	b := binary.LittleEndian.AppendUint32([]byte{0xe9}, uint32(int32(d)))
	for len(b) < len(w.Code) {
		b = append(b, 0xcc)
	}
	return b, nil
}

// CpuidAnswer is one answer of the table: cpuid(Leaf, Sub), or of every
// subleaf when AnySub.
type CpuidAnswer = trace.CpuidAnswer

// SetCpuid writes the table of cpuid's answers into a process's hook page
// (at most CpuidMax; the questions past them trap).
func SetCpuid(m *ptrace.Mem, answers []CpuidAnswer) error {
	answers = answers[:min(len(answers), CpuidMax)]
	le := binary.LittleEndian
	var b []byte
	for _, a := range answers {
		any := uint32(0)
		if a.AnySub {
			any = 1
		}
		for _, v := range []uint32{a.Leaf, a.Sub, any, 0, a.Eax, a.Ebx, a.Ecx, a.Edx} {
			b = le.AppendUint32(b, v)
		}
	}
	if len(b) > 0 {
		if _, err := m.WriteAt(b, CpuidTable); err != nil {
			return fmt.Errorf("write the hook page: %w", err)
		}
	}
	if _, err := m.WriteAt(le.AppendUint64(nil, uint64(len(answers))), Ctl+ctlNCpuid); err != nil {
		return fmt.Errorf("write the hook page: %w", err)
	}
	return nil
}

// cpuidStubAt returns the window's start and the offset of its cpuid of
// the cpuid stub holding pc, if pc is in one.
func cpuidStubAt(mem Memory, pc uint64) (start uint64, trap int, ok bool) {
	page := pc &^ 0xfff
	slot := page + (pc-page)/StubLen*StubLen
	var h [cpuidHeader]byte
	if _, err := mem.ReadAt(h[:], slot); err != nil || h[0] != 0xeb || [4]byte(h[2:6]) != cpuidMagic {
		return 0, 0, false
	}
	return binary.LittleEndian.Uint64(h[6:]), int(h[15]), true
}
