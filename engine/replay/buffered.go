package replay

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"

	"github.com/rewind-debugger/rewind/engine/hook"
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
	var recs []byte
	var sizes []int
	n := 0
	for s.next+int64(n) < s.batchTo {
		e, err := s.peek(n)
		if err != nil {
			return false, err
		}
		if e == nil || e.Tid != t.rec || !s.isBuffered(e) {
			break
		}
		r := recordOf(e)
		size := hook.RecordSize(r)
		if len(recs)+size > hook.BufSize {
			break
		}
		recs = hook.AppendRecord(recs, r)
		sizes = append(sizes, size)
		n++
	}
	if n > 0 && !s.stopsAt(t, n) {
		n--
		recs = recs[:len(recs)-sizes[n]]
		sizes = sizes[:n]
	}
	if n == 0 {
		return false, nil
	}
	var ctl [8]byte
	binary.LittleEndian.PutUint64(ctl[:], uint64(len(recs)))
	if err := t.proc.mem.WriteMany([][]byte{recs, ctl[:]}, []uint64{hook.Buf, hook.CtlLenAddr}); err != nil {
		return false, fmt.Errorf("give the hook its records: %w", err)
	}
	s.batch = &batch{t: t, sizes: sizes}
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

// stopsAt says whether the i-th event ahead is where t stops once it has
// made the calls before it: the entry of a system call of t, before the
// limit.
func (s *Session) stopsAt(t *rthread, i int) bool {
	if s.next+int64(i) >= s.batchTo {
		return false
	}
	e, err := s.peek(i)
	return err == nil && e != nil && e.Tid == t.rec && (e.Kind == trace.KindSyscall || e.Kind == trace.KindSyscallEntry)
}

// endBatch, at the first stop of the thread given a run, replays the
// events the hook answered and empties its buffer: what the thread does
// from here is replay's to see.
func (s *Session) endBatch() error {
	b := s.batch
	s.batch = nil
	mem := b.t.proc.mem
	var pos [8]byte
	if _, err := mem.ReadAt(pos[:], hook.CtlPosAddr); err != nil {
		return fmt.Errorf("read how far the hook got: %w", err)
	}
	consumed := binary.LittleEndian.Uint64(pos[:])
	zero := make([]byte, 8)
	if err := mem.WriteMany([][]byte{zero, zero}, []uint64{hook.CtlLenAddr, hook.CtlPosAddr}); err != nil {
		return fmt.Errorf("empty the hook's buffer: %w", err)
	}
	off := uint64(0)
	for _, size := range b.sizes {
		if off >= consumed {
			break
		}
		off += uint64(size)
		// The hook checked the bytes the program wrote against the
		// record (its first ones and hash); what went to a standard
		// stream is shown as recorded, if those are its bytes.
		if e := s.queue[0]; e.Flags&(trace.FlagStdout|trace.FlagStderr) != 0 {
			h := fnv.New64a()
			h.Write(e.Data)
			if h.Sum64()|1 != e.Hash {
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

// isBuffered says whether e is a call the hook recorded in the program.
func (s *Session) isBuffered(e *trace.Event) bool {
	if e.Kind == trace.KindRdtsc {
		return e.Flags&trace.FlagBuffered != 0 && s.hdr.Hook != "" // an rdtsc the hook read
	}
	return e.Kind == trace.KindSyscall && e.Flags&trace.FlagBuffered != 0 && e.Flags&trace.FlagHookSite == 0 && s.fromHook(e) &&
		!hook.ReplayTraced(uint64(e.Syscall))
}

// recordOf is the hook's record of buffered call e.
func recordOf(e *trace.Event) *hook.Record {
	if e.Kind == trace.KindRdtsc {
		return &hook.Record{Nr: hook.NrRdtsc, Args: [6]uint64{e.Regs[trace.RIP]}, Ret: int64(e.Value)}
	}
	r := &hook.Record{Nr: uint64(e.Syscall), Ret: int64(e.ExitRegs[trace.RAX]), Hash: e.Hash}
	for i, reg := range []int{trace.RDI, trace.RSI, trace.RDX, trace.R10, trace.R8, trace.R9} {
		r.Args[i] = e.Regs[reg]
	}
	for _, m := range e.Mem {
		r.Outputs = append(r.Outputs, hook.Output{Addr: m.Addr, Data: m.Data})
	}
	for _, m := range e.In {
		r.Inputs = append(r.Inputs, hook.Output{Addr: m.Addr, Data: m.Data})
	}
	return r
}
