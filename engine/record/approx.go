package record

import (
	"slices"

	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Approximate preemptions: where replay can stop, and what the registers
// point at, in the fingerprint.
//
// Replay finds an approximate preemption (one the recorder could not prove
// a spin) at the first pass of its pc with the recorded registers, stack
// window, FPU state and global data. Memory elsewhere is not in that
// fingerprint, and passes can share all of it: a sort's comparator called
// twice on the same two slots, whose contents were swapped in between,
// holds the same pointers in the same registers. Replay then stops the
// thread a pass early, its later run differs, and other threads, which
// see its memory, diverge (gdb's parallel DWARF indexing did, under load).
// So the bytes each register points at go into the event too, as memory
// replay compares at the passes whose registers match, and so do the stack
// above rsp and the callers' frames further up (deepStack): a qsort run in
// a loop compares the same two slots of a fresh copy of the same array
// with the same registers and stack window in every iteration, and only
// the loop's counter, in a frame further up, tells the iterations apart.
// Replay that stopped in an early iteration fell behind the recording and
// could not find the thread's next point before its search gave up.

// pointeeLen is how many bytes are taken at each address: two words (a
// word alone is what replay's trampoline takes for the one memory word the
// recorder saw change between two passes, In[0]).
const pointeeLen = 16

// pointeeRegs are the registers whose values may point at data: rsp's
// window is in the stack hash already.
var pointeeRegs = [...]int{trace.RAX, trace.RCX, trace.RDX, trace.RBX, trace.RBP, trace.RSI, trace.RDI,
	trace.R8, trace.R9, trace.R10, trace.R11, trace.R12, trace.R13, trace.R14, trace.R15}

// approxWords is the memory an approximate preemption's fingerprint takes
// beyond the registers: what the registers point at (ptrs), the stack
// from rsp up (deep, empty where it cannot be read) and the sum of the
// stack above that (wide: ptrace.WideSum, 0 if none).
type approxWords struct {
	ptrs []trace.Mem
	deep trace.Mem
	wide uint64
}

// all is the words as the event's In holds them, the stack last.
func (w approxWords) all() []trace.Mem {
	if len(w.deep.Data) == 0 {
		return w.ptrs
	}
	return append(slices.Clip(w.ptrs), w.deep)
}

// approxPoint looks at t's state for an approximate preemption at its pc:
// whether replay can stop there at all (ok: the pc is in executable
// memory, or that cannot be told; a thread that jumped into data stands
// on an instruction it will fault on, which replay's breakpoint or
// trampoline never reaches), and the memory it takes (approxWords). The
// mappings of the pc, rsp and the registers' addresses are looked up
// together.
func (r *Recorder) approxPoint(t *thread, regs *trace.Regs) (words approxWords, ok bool) {
	addrs := []uint64{regs[trace.RIP], regs[trace.RSP]}
	for _, idx := range pointeeRegs {
		a := regs[idx]
		if a < 1<<16 || a >= 1<<47-pointeeLen || a+pointeeLen > hook.Base && a < hook.Base+hook.Size {
			continue
		}
		if !slices.Contains(addrs[2:], a) {
			addrs = append(addrs, a)
		}
	}
	mem := r.memOf(t)
	vmas, err := mem.VMAs(addrs)
	if err != nil {
		return approxWords{}, true
	}
	if !vmas[0].Exec {
		return approxWords{}, false
	}
	words.ptrs = pointees(mem, addrs[2:], vmas[2:])
	words.deep = deepStack(mem, regs, vmas[1])
	if len(words.deep.Data) > 0 {
		words.wide = mem.WideSum(ptrace.WideStack(regs[trace.RSP], vmas[1].End, regs[trace.FSBase]))
	}
	return words, true
}

// pointees returns pointeeLen bytes at each of addrs (held in general
// registers), in vmas, where that is memory replay holds the same bytes
// in: private, readable and writable (code may carry replay's breakpoints
// and trampoline jumps; shared memory changes under the program; the
// hook's pages, left out before, hold what each side's hook wrote).
// Addresses it cannot check are left out: a weaker fingerprint, never a
// wrong one.
func pointees(mem *ptrace.Mem, addrs []uint64, vmas []ptrace.VMA) []trace.Mem {
	var at []uint64
	for i, a := range addrs {
		if v := vmas[i]; v.Read && v.Write && !v.Shared && !v.Exec && a+pointeeLen <= v.End {
			at = append(at, a)
		}
	}
	if len(at) == 0 {
		return nil
	}
	bufs := make([][]byte, len(at))
	for i := range bufs {
		bufs[i] = make([]byte, pointeeLen)
	}
	if err := mem.ReadMany(bufs, at); err != nil {
		return nil
	}
	out := make([]trace.Mem, len(at))
	for i, a := range at {
		out[i] = trace.Mem{Addr: a, Data: bufs[i]}
	}
	return out
}

// deepStack reads the stack from regs' rsp up that an approximate
// preemption's fingerprint takes (ptrace.DeepStackLen), in stack, the
// mapping that holds rsp; none where it cannot be read.
func deepStack(mem *ptrace.Mem, regs *trace.Regs, stack ptrace.VMA) trace.Mem {
	rsp := regs[trace.RSP]
	n := ptrace.DeepStackLen(rsp, stack.End, regs[trace.FSBase])
	if n == 0 {
		return trace.Mem{}
	}
	b := make([]byte, n)
	if got, err := mem.ReadAt(b, rsp); err != nil || got != n {
		return trace.Mem{}
	}
	return trace.Mem{Addr: rsp, Data: b}
}
