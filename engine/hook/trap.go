package hook

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Patched trapping instructions: cpuid, rdtsc and xgetbv. Where the CPU traps
// cpuid (CPUID faulting), each one costs a ptrace stop, and a program's
// loader asks ~70 at every exec (its cache sizes, a subleaf at a time);
// rdtsc always traps (PR_TSC_SIGSEGV), eight times in each loader. The
// recorder patches each one that trapped, with the instructions around it
// (a patch.Window), into a jump to a stub that asks the hook:
//
//   - cpuid's answers do not change during a recording: the recorder
//     writes them into the hook page once (a table the trace keeps,
//     SetCpuid), the same in replay, with no event;
//   - rdtsc's value is read by the hook, with rdtsc allowed for an instant,
//     and recorded in its buffer (a record of number NrRdtsc, the site's
//     address its first argument), which replay gives the hook back.
//
// Where the hook has no answer (a question the table lacks, a full
// buffer, a thread that asked for rdtsc to fault, no record in replay) the
// stub runs the instruction itself, which traps as before.
//
// A stub, in a slot of a stub page (StubLen bytes):
//
//	0   eb 0e            jmp over the header
//	2   magic            what the slot holds (UserView): Trap.magic
//	6   u64              the window's start
//	14  u8, u8           the window's length, the instruction's offset in it
//	16  the window's instructions before the trapping one
//	    mov %rsp,CTL_TRAP_RSP; mov $TrapStackTop,%rsp   (the hook's trap
//	    stack: the program's is left alone, so that record and replay,
//	    whose hook code differs, leave the same bytes there)
//	    mov $TrapEntry,%e?x; call *%r?x     (a register the instruction
//	    sets: nothing of the program's is lost)
//	    mov CTL_TRAP_RSP,%rsp; jmp post     (an answer)
//	    mov CTL_TRAP_RSP,%rsp; the instruction (none: trapMissSkip on)
//	post: the window's instructions after it; jmp to the window's end

// Trap is a kind of trapping instruction the hook answers at patched sites.
type Trap struct {
	Nr      uint32 // its trace.HookPatch.Nr (and a record's number, for rdtsc)
	Name    string // the instruction
	insn    []byte // its bytes
	scratch byte   // the register (its number) that holds entry: one the instruction sets
	magic   [4]byte
}

// The traps patched sites answer: no system call has their numbers.
//
// xgetbv's answer for ecx 0 (XCR0, the register states the system
// enables, less those of the features hidden from the program) does not
// change during a recording either: the recorder writes it into the hook
// page (SetXCR0; the trace keeps it, trace.Header.XCR0). The loader asks
// it once in every process; a window is patched only where the code sets
// ecx to 0 just before (Patchable), so that the hook is never asked for
// another register.
var (
	TrapCpuid  = Trap{Nr: NrCpuid, Name: "cpuid", insn: []byte{0x0f, 0xa2}, scratch: 3 /* rbx */, magic: [4]byte{'R', 'W', 'C', 'P'}}
	TrapRdtsc  = Trap{Nr: NrRdtsc, Name: "rdtsc", insn: []byte{0x0f, 0x31}, scratch: 0 /* rax */, magic: [4]byte{'R', 'W', 'T', 'S'}}
	TrapXgetbv = Trap{Nr: NrXgetbv, Name: "xgetbv", insn: []byte{0x0f, 0x01, 0xd0}, scratch: 0 /* rax */, magic: [4]byte{'R', 'W', 'X', 'G'}}
)

// traps are the kinds of trapping instructions patched sites answer.
var traps = []Trap{TrapCpuid, TrapRdtsc, TrapXgetbv}

// NrCpuid, NrRdtsc and NrXgetbv are the trace.HookPatch.Nr of a patched
// cpuid, rdtsc and xgetbv, and NrRdtsc the number of the hook's record of
// an rdtsc.
const (
	NrCpuid  = 0xffffffff
	NrRdtsc  = 0xfffffffe
	NrXgetbv = 0xfffffffd
)

// TrapOf returns the trap whose patches have number nr.
func TrapOf(nr uint32) (Trap, bool) {
	for _, k := range traps {
		if k.Nr == nr {
			return k, true
		}
	}
	return Trap{}, false
}

// Len is the length of the instruction.
func (k Trap) Len() int { return len(k.insn) }

// NeedsPrev says whether a window around an instruction of kind k must
// hold the instruction before it (patch.Space.TrapWindow), for Patchable
// to look at: an xgetbv's.
func (k Trap) NeedsPrev() bool { return k.Nr == NrXgetbv }

// Patchable says whether the window w around an instruction of kind k may
// be patched: an xgetbv only where the instruction before it in the window
// sets ecx to 0 (xor %ecx,%ecx, or mov $0,%ecx), the register whose answer
// the hook has (nothing jumps past it: only the window's first instruction
// may be a jump's target).
func (k Trap) Patchable(w patch.Window) bool {
	if !k.NeedsPrev() {
		return true
	}
	before := w.Code[:w.Trap]
	return bytes.HasSuffix(before, []byte{0x31, 0xc9}) || bytes.HasSuffix(before, []byte{0xb9, 0, 0, 0, 0})
}

const stubHeader = 16

// trapMiddle is the length of a stub's code between the window's
// instructions before the trapping one and those after, but for the
// instruction itself (n bytes, the middle's end): the move to the trap
// stack, the call, the way back after an answer; trapOnStack and
// trapMissRSP are the offsets from there where the thread runs on the trap
// stack, trapCall that of the call.
const (
	trapOnStack = 8 + 7
	trapCall    = 8 + 7 + 5
	trapMissRSP = 8 + 7 + 5 + 2 + 8 + 2
)

// trapMiddle is the length of the middle of a stub whose instruction has n
// bytes.
func trapMiddle(n int) int { return 8 + 7 + 5 + 2 + 8 + 2 + 8 + n }

// onTrapStack says whether offset off of a trap stub whose instruction
// is trap bytes into its window is where the thread runs on the hook's
// trap stack (its own rsp in the control page).
func onTrapStack(off, trap int) bool {
	pre := stubHeader + trap
	return off >= pre+trapOnStack && off <= pre+trapCall+2 || off == pre+trapMissRSP
}

// Stub returns the code of the stub at addr for the window w.
func (k Trap) Stub(addr uint64, w patch.Window) ([]byte, error) {
	le := binary.LittleEndian
	b := make([]byte, 0, StubLen)
	b = append(b, 0xeb, stubHeader-2)
	b = append(b, k.magic[:]...)
	b = le.AppendUint64(b, w.Start)
	b = append(b, byte(len(w.Code)), byte(w.Trap))
	pre, ok := w.Move(0, w.Trap, addr+uint64(len(b)))
	if !ok {
		return nil, fmt.Errorf("hook: the code before the %s at %#x cannot move to %#x", k.Name, w.Start+uint64(w.Trap), addr)
	}
	b = append(b, pre...)
	b = append(b, 0x48, 0x89, 0x24, 0x25) // mov %rsp, abs32
	b = le.AppendUint32(b, Ctl+ctlTrapRSP)
	b = append(b, 0x48, 0xc7, 0xc4) // mov $TrapStackTop, %rsp
	b = le.AppendUint32(b, TrapStackTop)
	b = append(b, 0xb8+k.scratch) // mov $TrapEntry, %e?x
	b = le.AppendUint32(b, TrapEntry)
	b = append(b, 0xff, 0xd0+k.scratch)                                     // call *%r?x
	back := le.AppendUint32([]byte{0x48, 0x8b, 0x24, 0x25}, Ctl+ctlTrapRSP) // mov abs32, %rsp
	b = append(b, back...)
	b = append(b, 0xeb, byte(len(back)+len(k.insn))) // jmp post
	b = append(b, back...)
	b = append(b, k.insn...)
	if len(b) != stubHeader+w.Trap+trapMiddle(len(k.insn)) {
		panic("hook: trap stub layout")
	}
	post, ok := w.Move(w.Trap+w.Len, len(w.Code), addr+uint64(len(b)))
	if !ok {
		return nil, fmt.Errorf("hook: the code after the %s at %#x cannot move to %#x", k.Name, w.Start+uint64(w.Trap), addr)
	}
	b = append(b, post...)
	d := int64(w.End() - (addr + uint64(len(b)) + 5))
	if d != int64(int32(d)) {
		return nil, fmt.Errorf("hook: the stub at %#x is out of a jump's reach of the %s at %#x", addr, k.Name, w.Start+uint64(w.Trap))
	}
	b = append(b, 0xe9)
	b = le.AppendUint32(b, uint32(int32(d)))
	if len(b) > StubLen {
		return nil, fmt.Errorf("hook: the %s window at %#x needs a stub of %d bytes", k.Name, w.Start, len(b))
	}
	for len(b) < StubLen {
		b = append(b, 0xcc)
	}
	return b, nil
}

// TrapResume is where a thread standing at rip goes on once the window w
// is patched with its stub at stub: rip itself unless rip is inside the
// window, past its trapping instruction (a thread that has just trapped
// there), where it goes to the same instruction in the stub.
func TrapResume(w patch.Window, stub, rip uint64) uint64 {
	after := w.Start + uint64(w.Trap+w.Len)
	if rip < after || rip >= w.End() {
		return rip
	}
	return stub + uint64(stubHeader+w.Trap+trapMiddle(w.Len)) + (rip - after)
}

// TrapJump returns the bytes replacing the window's code: a jmp to the
// stub, then int3s (nothing jumps there).
func TrapJump(w patch.Window, stub uint64) ([]byte, error) {
	d := int64(stub - (w.Start + 5))
	if d != int64(int32(d)) {
		return nil, fmt.Errorf("hook: the stub at %#x is out of a jump's reach of the window at %#x", stub, w.Start)
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
func SetCpuid(m *ptrace.Mem, answers []CpuidAnswer) error { return EncodeCpuid(answers).Set(m) }

// CpuidBytes is a table of cpuid's answers as a hook page holds it: the
// same for every process of a recording, encoded once (~6 KB, which took
// ~1% of make's tracer time encoded at each exec).
type CpuidBytes struct{ table, count []byte }

// EncodeCpuid encodes answers (at most CpuidMax) for Set.
func EncodeCpuid(answers []CpuidAnswer) CpuidBytes {
	answers = answers[:min(len(answers), CpuidMax)]
	le := binary.LittleEndian
	b := make([]byte, 0, 32*len(answers))
	for _, a := range answers {
		any := uint32(0)
		if a.AnySub {
			any = 1
		}
		for _, v := range [8]uint32{a.Leaf, a.Sub, any, 0, a.Eax, a.Ebx, a.Ecx, a.Edx} {
			b = le.AppendUint32(b, v)
		}
	}
	return CpuidBytes{table: b, count: le.AppendUint64(nil, uint64(len(answers)))}
}

// Set writes the table into a process's hook page.
func (c CpuidBytes) Set(m *ptrace.Mem) error {
	if len(c.table) > 0 {
		if _, err := m.WriteAt(c.table, CpuidTable); err != nil {
			return fmt.Errorf("write the hook page: %w", err)
		}
	}
	if _, err := m.WriteAt(c.count, Ctl+ctlNCpuid); err != nil {
		return fmt.Errorf("write the hook page: %w", err)
	}
	return nil
}

// SetXCR0 writes xgetbv(0)'s answer for patched xgetbv sites into a
// process's hook page (0: none, they trap).
func SetXCR0(m *ptrace.Mem, xcr0 uint64) error {
	if _, err := m.WriteAt(binary.LittleEndian.AppendUint64(nil, xcr0), Ctl+ctlXCR0); err != nil {
		return fmt.Errorf("write the hook page: %w", err)
	}
	return nil
}

// trapStubAt returns the window's start, the offset of its trapping
// instruction and the instruction's length of the trap stub holding pc, if
// pc is in one.
func trapStubAt(mem Memory, pc uint64) (start uint64, trap, n int, ok bool) {
	page := pc &^ 0xfff
	slot := page + (pc-page)/StubLen*StubLen
	var h [stubHeader]byte
	if _, err := mem.ReadAt(h[:], slot); err != nil || h[0] != 0xeb || h[1] != stubHeader-2 {
		return 0, 0, 0, false
	}
	for _, k := range traps {
		if [4]byte(h[2:6]) == k.magic {
			return binary.LittleEndian.Uint64(h[6:]), int(h[15]), len(k.insn), true
		}
	}
	return 0, 0, 0, false
}

// InTrapStub says whether pc, in a trap stub, is where the thread runs on
// the hook's trap stack, which one thread at a time may use: no signal,
// preemption or flush may come there.
func InTrapStub(mem Memory, pc uint64) bool {
	_, trap, _, ok := trapStubAt(mem, pc)
	return ok && onTrapStack(int((pc&0xfff)%StubLen), trap)
}

// TrapSiteAt returns the address of the patched instruction whose stub
// holds pc, if pc is in a trap stub.
func TrapSiteAt(mem Memory, pc uint64) (uint64, bool) {
	start, trap, _, ok := trapStubAt(mem, pc)
	return start + uint64(trap), ok
}
