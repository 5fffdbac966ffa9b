package replay

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Buffered calls, replay's side (engine/hook). A call the hook recorded
// in the program is an event of its own; replayed one at a time, each
// would cost the thread a stop at the hook's traced call, as a call the
// recorder stopped for does. Instead, when the events ahead are a run of
// one thread's buffered calls, replay gives the hook their records and
// lets the thread run: the hook answers each call from its record, with no
// stop, when the number and arguments are the recorded ones, and makes
// any other call traced, where replay reports the difference. At the
// thread's next stop, replay reads how far the hook got (CTL_POS): the
// events consumed are replayed, and the stop belongs to the next one.
//
// Runs are given only where the stops between them do not matter: while
// Run or Continue replays (not Step or StepInstruction, which stop at
// every event), never past Continue's limit, and not while watchpoints,
// arrival counters or a preemption point watch the thread's instructions.

// batch is a run of buffered calls given to the hook of t's process.
type batch struct {
	t     *rthread
	sizes []int // each record's size, in order
	// remade says which records the hook makes again (Record.Remake),
	// which it can only under the filter, the thread resumed with
	// PTRACE_CONT (PTRACE_SYSEMU would stop those calls too).
	remade []bool
	cont   bool // some are
	// recs and rec: the records, and the one being made, kept from run
	// to run.
	recs []byte
	rec  hook.Record
}

// batchUntil says whether the events ahead may be given to the hook, and
// up to which event index (exclusive): limit < 0 without a limit (Run), 0
// not at all, else up to limit (Continue's).
func (s *Session) batchUntil(limit int64) {
	switch {
	case limit == 0:
		s.batchTo = 0
	case limit < 0:
		s.batchTo = math.MaxInt64
	default:
		s.batchTo = limit
	}
}

// runBuffered gives the hook the run of buffered calls of t at the head of
// the queue, if there is one worth it, and runs t through them. It returns
// whether it ran t: then the events the hook answered are replayed, and
// t's stop waits (t.pending) for the event now at the head of the queue.
func (s *Session) runBuffered(t *rthread) (bool, error) {
	if s.batchTo <= s.next || s.hdr.Hook == "" || len(s.watches) > 0 || s.tramp != nil || s.preemptPC != 0 ||
		s.countersOpen(t) || t.pending != nil || t.atEntry || t.atExec || t.inKernel || t.dead || t.resumeSig != 0 || t.proc.mem == nil {
		return false, nil
	}
	// The run: buffered calls of t, then an event that t's next stop is
	// (a system call's entry), all before the limit. A run followed by
	// anything else leaves its last call to be made traced, which stops.
	// (Its buffers are the last run's: a run of 100k close calls made
	// garbage enough to spend a third of the replay collecting it.)
	b := &s.batchBuf
	recs, sizes, remade := b.recs[:0], b.sizes[:0], b.remade[:0]
	r := &b.rec
	n := 0
	for s.next+int64(n) < s.batchTo {
		e, err := s.peek(n)
		if err != nil {
			return false, err
		}
		if e == nil || e.Tid != t.rec {
			break
		}
		recordOf(e, r)
		if !s.inBatch(t, e, r) {
			break
		}
		remake := r.Remake
		size := hook.RecordSize(r)
		if len(recs)+size > hook.BufSize {
			break
		}
		recs = hook.AppendRecord(recs, r)
		sizes = append(sizes, size)
		remade = append(remade, remake)
		n++
	}
	if n > 0 && !s.stopsAt(t, n) {
		n--
		recs = recs[:len(recs)-sizes[n]]
		sizes, remade = sizes[:n], remade[:n]
	}
	if n == 0 {
		return false, nil
	}
	var ctl [8]byte
	binary.LittleEndian.PutUint64(ctl[:], uint64(len(recs)))
	if err := t.proc.mem.WriteMany([][]byte{recs, ctl[:]}, []uint64{hook.Buf, hook.CtlLenAddr}); err != nil {
		return false, fmt.Errorf("give the hook its records: %w", err)
	}
	b.t, b.recs, b.sizes, b.remade, b.cont = t, recs, sizes, remade, slices.Contains(remade, true)
	s.batch = b
	st, err := s.run(t)
	if s.batch != nil {
		// Stopped before the thread ran (a breakpoint where it stands).
		if berr := s.endBatch(); err == nil {
			err = berr
		}
	}
	if err != nil {
		return true, err
	}
	t.pending = &st
	return true, nil
}

// seccompToEntry turns the filter's stop of t at a call (resumed with
// PTRACE_CONT for a batch) into the stop replay meets a call at: the call
// skipped, t moved back onto its instruction and resumed with
// PTRACE_SYSEMU, which stops at its entry again. A call reexec makes again
// at the hook page needs none of that: one stop less.
func (s *Session) seccompToEntry(t *rthread) (ptrace.Status, error) {
	t.atFilter = false
	var regs trace.Regs
	if err := ptrace.GetRegs(t.real, &regs); err != nil {
		return ptrace.Status{}, err
	}
	regs[trace.RIP] -= 2 // syscall, or int $0x80
	regs[trace.RAX] = regs[trace.OrigRAX]
	regs[trace.OrigRAX] = ^uint64(0)
	if err := ptrace.SetRegs(t.real, &regs); err != nil {
		return ptrace.Status{}, fmt.Errorf("back onto a call's instruction: %w", err)
	}
	if err := ptrace.Sysemu(t.real, 0); err != nil {
		return ptrace.Status{}, err
	}
	return s.waitFor(t)
}

// leaveFilterStop makes t's stop PTRACE_SYSEMU's where the filter stopped
// it (atFilter).
func (s *Session) leaveFilterStop(t *rthread) error {
	if !t.atFilter {
		return nil
	}
	st, err := s.seccompToEntry(t)
	if err == nil && st.Kind != ptrace.StopSyscall {
		err = fmt.Errorf("back at a call's entry: got %s", describe(st))
	}
	return err
}

// stopsAt says whether the i-th event ahead is where t stops once it has
// made the calls before it: the entry of a system call of t that the
// filter stops, before the limit.
func (s *Session) stopsAt(t *rthread, i int) bool {
	if s.next+int64(i) >= s.batchTo {
		return false
	}
	e, err := s.peek(i)
	// Not a call the filter does not see (uretprobe): run with
	// PTRACE_CONT, the thread would go through it to what it does.
	return err == nil && e != nil && e.Tid == t.rec && (e.Kind == trace.KindSyscall || e.Kind == trace.KindSyscallEntry) &&
		filterSees(int(e.Syscall))
}

// endBatch, at the first stop of the thread given a run, replays the
// events the hook answered and empties its buffer: what the thread does
// from here is replay's to see.
func (s *Session) endBatch() error {
	b := s.batch
	s.batch = nil
	t, mem := b.t, b.t.proc.mem
	var pos [8]byte
	var miss [16]byte // nr, result (hook.CtlMissAddr)
	if err := mem.ReadMany([][]byte{pos[:], miss[:]}, []uint64{hook.CtlPosAddr, hook.CtlMissAddr}); err != nil {
		return fmt.Errorf("read how far the hook got: %w", err)
	}
	le := binary.LittleEndian
	consumed := le.Uint64(pos[:])
	zero := make([]byte, 16)
	if err := mem.WriteMany([][]byte{zero[:8], zero[:8], zero}, []uint64{hook.CtlLenAddr, hook.CtlPosAddr, hook.CtlMissAddr}); err != nil {
		return fmt.Errorf("empty the hook's buffer: %w", err)
	}
	off := uint64(0)
	for i, size := range b.sizes {
		if off >= consumed {
			if nr := le.Uint64(miss[:]); nr != 0 && b.remade[i] {
				e := s.queue[0]
				return s.diverge(e, "%s (made again by the hook page) returned %#x, recorded %#x",
					syscalls.Name(int(nr)), le.Uint64(miss[8:]), e.ExitRegs[trace.RAX])
			}
			break
		}
		off += uint64(size)
		if b.remade[i] {
			// What replay does after a call it makes again (a file it
			// maps is the trace's copy: remakes).
			e := s.queue[0]
			s.patchAfterSyscall(t, e)
			if t.proc == s.main {
				s.renameMemory(e, callOf(e, &e.Regs), e.Map != nil)
			}
		}
		// The hook checked the bytes the program wrote against the
		// record (its first ones and hash); what went to a standard
		// stream is shown as recorded, if those are its bytes.
		if e := s.queue[0]; e.Flags&(trace.FlagStdout|trace.FlagStderr) != 0 {
			if trace.WriteSum(s.hdr.WriteHash, e.Data) != e.Hash {
				return s.diverge(e, "output bytes differ from the recording")
			}
			if err := s.emit(b.t, e, e.Data); err != nil {
				return err
			}
		}
		s.queue[0] = nil
		s.queue = s.queue[1:]
		s.next++
	}
	if off != consumed {
		return fmt.Errorf("the hook answered %d bytes of records, not a whole number of them", consumed)
	}
	return nil
}

// inBatch says whether e, a call the hook recorded in the program, may be
// given to t's hook in a batch, as r (its record, which it marks to make
// again when it must be).
func (s *Session) inBatch(t *rthread, e *trace.Event, r *hook.Record) bool {
	if e.Kind == trace.KindRdtsc {
		return e.Flags&trace.FlagBuffered != 0 && s.hdr.Hook != "" // an rdtsc the hook read
	}
	if e.Kind != trace.KindSyscall || e.Flags&trace.FlagBuffered == 0 || e.Flags&trace.FlagHookSite != 0 || !s.fromHook(e) {
		return false
	}
	if !hook.ReplayTraced(uint64(e.Syscall)) {
		return true
	}
	return s.remakes(t, e, r)
}

// remakes says whether the hook of t may take e, a call replay makes again
// (hook.ReplayTraced), as applySyscall would: made again by the hook (under
// the filter, which lets the hook's own call through) with the arguments
// reexec would give it, answered from its record when applySyscall would
// emulate it (it failed), or not at all when replay must make it itself
// (an mmap that fills memory from the trace, or whose stored file is not
// open in the process yet; a call a filter of the program's own stopped,
// rolled back with its number in its result).
func (s *Session) remakes(t *rthread, e *trace.Event, r *hook.Record) bool {
	c := callOf(e, &e.Regs)
	spec, known := syscalls.Lookup(c.Nr)
	if !s.filtered || !t.proc.hooked || !known || e.ExitRegs[trace.RAX] == e.Regs[trace.OrigRAX] {
		return false
	}
	if spec.PolicyFor(&c) != syscalls.Reexec || isErr(e.ExitRegs[trace.RAX]) && !spec.NoFailure {
		return true
	}
	r.Remake, r.RemakeArgs = true, c.Args
	if c.Nr != unix.SYS_MMAP {
		return true
	}
	// The hook records private mappings of memory, or of a file the
	// trace stored (hook.c's mappable): reexec's arguments.
	if e.Shared != nil || c.Args[3]&mapTypeMask != unix.MAP_PRIVATE {
		return false
	}
	if c.Args[3]&unix.MAP_FIXED == 0 {
		r.RemakeArgs[0] = e.ExitRegs[trace.RAX]
		r.RemakeArgs[3] |= mapFixedNoReplace
	}
	if c.Args[3]&unix.MAP_ANONYMOUS != 0 {
		return true
	}
	if e.Map == nil {
		return false
	}
	if at, ok, err := s.packed(e.Map, c.Args[5], c.Args[1], c.Args[2]); err != nil || ok {
		// A small file, from the pack: open in the process already, or
		// opened by reexec (mapStored) for this mapping and the next.
		fd, open := t.proc.stored.packFd()
		if err != nil || !open {
			return false
		}
		r.RemakeArgs[4], r.RemakeArgs[5] = uint64(fd), c.Args[5]+uint64(at)
		return true
	}
	if fd, ok := t.proc.stored.fd(e.Map.Blob); ok {
		r.RemakeArgs[4] = uint64(fd)
		return true
	}
	// Not open in the process: the hook opens replay's copy itself
	// (storedFile: the file, where it is still the one recorded, or a
	// memfd of the trace's), maps it and closes it, with no stop.
	f, err := s.storedFile(e.Map)
	if err != nil || f == nil {
		return false
	}
	r.RemakePath = fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), f.Fd())
	return true
}

// recordOf makes r the hook's record of buffered call e (reusing its
// slices).
func recordOf(e *trace.Event, r *hook.Record) {
	*r = hook.Record{Inputs: r.Inputs[:0], Outputs: r.Outputs[:0]}
	if e.Kind == trace.KindRdtsc {
		r.Nr, r.Args[0], r.Ret = hook.NrRdtsc, e.Regs[trace.RIP], int64(e.Value)
		return
	}
	r.Nr, r.Ret, r.Hash = uint64(e.Syscall), int64(e.ExitRegs[trace.RAX]), e.Hash
	for i, reg := range []int{trace.RDI, trace.RSI, trace.RDX, trace.R10, trace.R8, trace.R9} {
		r.Args[i] = e.Regs[reg]
	}
	for _, m := range e.Mem {
		r.Outputs = append(r.Outputs, hook.Output{Addr: m.Addr, Data: m.Data})
	}
	for _, m := range e.In {
		r.Inputs = append(r.Inputs, hook.Output{Addr: m.Addr, Data: m.Data})
	}
}
