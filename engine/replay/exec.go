package replay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// StopKind says why a replay stopped between events.
type StopKind int

// Stop kinds.
const (
	StopBreakpoint StopKind = iota + 1 // a thread reached a breakpoint address
	StopWatchpoint                     // a watched location was written (or read)
	StopStep                           // one instruction was executed
	StopCounter                        // an arrival counter reached its stop value (counter.go)
)

// Stop is a place where the replay stopped inside the run of a thread
// towards its next event (or just after an event that wrote watched memory).
type Stop struct {
	Kind  StopKind
	Tid   int32  // recorded tid
	PC    uint64 // the thread's rip now
	Watch int    // index into the session's watchpoints (StopWatchpoint)
	// Also has a bit for every watchpoint the same instruction triggered
	// (bit Watch included): two watchpoints on one location both count.
	Also uint8
	// Values are the watched locations' values at a watchpoint stop, read
	// where the replay runs: a caller reading them itself would cost a hop
	// to the ptrace thread per trap.
	Values []uint64
	// Event is set when the stop is at an event boundary: a system call's
	// kernel write hit a watchpoint.
	Event bool
}

// Watchpoint is a hardware watchpoint: Len is 1, 2, 4 or 8 and Addr must be
// aligned to it.
type Watchpoint struct {
	Addr      uint64
	Len       int
	ReadWrite bool // trap on reads too (otherwise writes only)
}

// MaxWatchpoints is the number of x86 debug address registers.
const MaxWatchpoints = 4

// errStopped unwinds an event's application when a user stop interrupts it;
// the event is applied again (continuing from the stop) by the next step.
var errStopped = errors.New("stopped")

// Linux si_code values of SIGTRAP.
const (
	trapBrkpt  = 1 // TRAP_BRKPT: icebp, or a debug exception whose DR6 was lost
	trapTrace  = 2 // TRAP_TRACE: single-step
	trapHWBkpt = 4 // TRAP_HWBKPT: debug register hit
)

// DR6 bits: B0-B3 (a debug address register matched) and BS (single-step).
const (
	dr6Hits = 0xf
	dr6Step = 0x4000
)

// eflagsTF is the trap flag.
const eflagsTF = 0x100

// debug register 6 and 7 indexes.
const (
	dr6 = 6
	dr7 = 7
)

// SetBreakpoints replaces the software breakpoints.
func (s *Session) SetBreakpoints(addrs []uint64) {
	s.bps = map[uint64]byte{}
	for _, a := range addrs {
		s.bps[a] = 0
	}
}

// SetWatchpoints replaces the hardware watchpoints.
func (s *Session) SetWatchpoints(ws []Watchpoint) error {
	if len(ws) > MaxWatchpoints {
		return fmt.Errorf("only %d hardware watchpoints are available (the x86 debug registers)", MaxWatchpoints)
	}
	for _, w := range ws {
		switch w.Len {
		case 1, 2, 4, 8:
		default:
			return fmt.Errorf("a hardware watchpoint covers 1, 2, 4 or 8 bytes, not %d", w.Len)
		}
		if w.Addr%uint64(w.Len) != 0 {
			return fmt.Errorf("a %d-byte watchpoint needs an address aligned to %d (%#x is not)", w.Len, w.Len, w.Addr)
		}
	}
	s.watches = append([]Watchpoint(nil), ws...)
	s.watchGen++
	return nil
}

// dr7For encodes the watchpoints into DR7.
func dr7For(ws []Watchpoint) uint64 {
	var v uint64
	for i, w := range ws {
		rw := uint64(1) // break on data writes
		if w.ReadWrite {
			rw = 3
		}
		var ln uint64
		switch w.Len {
		case 2:
			ln = 1
		case 4:
			ln = 3
		case 8:
			ln = 2
		}
		v |= 1 << (2 * i) // local enable
		v |= (rw | ln<<2) << (16 + 4*i)
	}
	return v
}

// syncWatch loads the current watchpoints into t's debug registers.
func (s *Session) syncWatch(t *rthread) error {
	if len(s.watches) > 0 {
		t.watchVals = s.valuesIn(t.proc.mem, t.watchVals[:0])
	}
	if t.watchGen == s.watchGen {
		return nil
	}
	if err := ptrace.SetDebugReg(t.real, dr7, 0); err != nil {
		return err
	}
	for i, w := range s.watches {
		if err := ptrace.SetDebugReg(t.real, i, w.Addr); err != nil {
			return err
		}
	}
	if err := ptrace.SetDebugReg(t.real, dr7, dr7For(s.watches)); err != nil {
		return err
	}
	t.watchGen = s.watchGen
	return nil
}

// insertBPs writes int3 at every breakpoint address (and the preemption
// point being sought); removeBPs puts the original bytes back. Breakpoints
// are in memory only while a thread runs, so memory reads never see them.
func (s *Session) insertBPs(t *rthread) error {
	s.inserted = s.inserted[:0]
	m := t.proc.mem
	s.insertedIn = m
	ins := func(addr uint64) error {
		for _, a := range s.inserted {
			if a.addr == addr {
				return nil
			}
		}
		var b [1]byte
		if _, err := m.ReadAt(b[:], addr); err != nil {
			return nil // not mapped (yet): nothing to break on
		}
		if _, err := m.WriteAt([]byte{0xcc}, addr); err != nil {
			return err
		}
		s.inserted = append(s.inserted, insertedBP{addr, b[0]})
		return nil
	}
	if t.proc == s.main { // the user's breakpoints are in the debugged process
		for a := range s.bps {
			if err := ins(a); err != nil {
				return err
			}
		}
	}
	if s.preemptPC != 0 {
		return ins(s.preemptPC)
	}
	if s.tramp != nil {
		return s.tramp.install(m, true)
	}
	if s.countersOpen(t) {
		for _, c := range s.counters {
			if c.open {
				if err := c.tr.install(m, true); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (s *Session) removeBPs() error {
	if s.tramp != nil {
		if err := s.tramp.install(s.insertedIn, false); err != nil {
			return err
		}
	}
	for _, c := range s.counters {
		if c.tr.installed {
			if err := c.tr.install(s.insertedIn, false); err != nil {
				return err
			}
		}
	}
	for i := len(s.inserted) - 1; i >= 0; i-- {
		bp := s.inserted[i]
		if _, err := s.insertedIn.WriteAt([]byte{bp.orig}, bp.addr); err != nil {
			return err
		}
	}
	s.inserted = s.inserted[:0]
	return nil
}

type insertedBP struct {
	addr uint64
	orig byte
}

// run resumes t until its next stop that concerns the recording (a system
// call, a signal, an exit…), or until a user stop, returned as errStopped
// with s.stop set. A stop the caller obtained earlier (by single-stepping
// into the event) is returned first.
func (s *Session) run(t *rthread) (ptrace.Status, error) {
	for {
		st, again, err := s.runOnce(t)
		if !again {
			return st, err
		}
	}
}

// runOnce is one resumption of run; again says the stop was a branch into
// a patched run (see trampoline.settle), taken care of: t is to be resumed.
func (s *Session) runOnce(t *rthread) (ptrace.Status, bool, error) {
	if t.pending != nil {
		st := *t.pending
		t.pending = nil
		if t.atFilter {
			// Not taken by toEntry: the stop replay expects elsewhere.
			st, err := s.seccompToEntry(t)
			return st, false, err
		}
		return st, false, nil
	}
	if err := s.syncWatch(t); err != nil {
		return ptrace.Status{}, false, err
	}
	if len(s.bps) > 0 && t.resumeSig == 0 {
		var regs trace.Regs
		if err := ptrace.GetRegs(t.real, &regs); err != nil {
			return ptrace.Status{}, false, err
		}
		if _, ok := s.bps[regs[trace.RIP]]; ok {
			if t.stopEvent != s.next || t.stopPC != regs[trace.RIP] {
				// It got here without executing (an event moved it):
				// that is an arrival too.
				return ptrace.Status{}, false, s.userStop(t, StopBreakpoint, regs[trace.RIP], 0)
			}
			// Step off the breakpoint we are stopped at.
			st, stepped, err := s.stepRaw(t)
			if err != nil || !stepped {
				return st, false, err
			}
		}
	}
	if s.tramp != nil && t.resumeSig == 0 {
		if st, stepped, err := s.stepOut(t, s.tramp); err != nil || !stepped {
			return st, false, err
		}
	}
	if s.countersOpen(t) && t.resumeSig == 0 {
		for _, c := range s.counters {
			if st, stepped, err := s.stepOut(t, c.tr); err != nil || !stepped {
				return st, false, err
			}
		}
	}
	if err := s.insertBPs(t); err != nil {
		return ptrace.Status{}, false, err
	}
	sig, frame := t.takeFrame()
	if frame != nil {
		if err := s.enterHandler(t, frame, sig); err != nil {
			s.removeBPs()
			return ptrace.Status{}, false, err
		}
		sig = 0
	}
	resume := ptrace.Sysemu
	if s.batch != nil && s.batch.t == t && s.batch.cont {
		resume = ptrace.Cont // buffered.go
	}
	if err := resume(t.real, sig); err != nil {
		s.removeBPs()
		return ptrace.Status{}, false, err
	}
	st, err := s.waitFor(t)
	if rerr := s.removeBPs(); err == nil && rerr != nil && !t.dead {
		err = rerr
	}
	if err == nil && st.Kind == ptrace.StopEvent && st.Event == unix.PTRACE_EVENT_SECCOMP {
		// The call that ends a batch (buffered.go): toEntry takes it as
		// it is, for applySyscall to decide.
		t.atFilter = true
		st.Kind, st.Event = ptrace.StopSyscall, 0
		if s.batch == nil || s.batch.t != t {
			st, err = s.seccompToEntry(t)
		}
	}
	if s.batch != nil && s.batch.t == t {
		if berr := s.endBatch(); err == nil {
			err = berr
		}
	}
	if err == nil && s.tramp != nil && !t.dead {
		hit, intruded, terr := s.tramp.settle(t.real, st)
		if terr != nil || hit {
			return st, false, terr // a register match: applyPreempt decides
		}
		if intruded {
			return st, true, nil
		}
	}
	if err == nil && s.countersOpen(t) && !t.dead {
		for _, c := range s.counters {
			hit, intruded, terr := c.tr.settle(t.real, st)
			switch {
			case terr != nil:
				return st, false, terr
			case hit:
				return st, false, s.counterStop(t, c)
			case intruded:
				return st, true, nil
			}
		}
	}
	if err != nil || st.Kind != ptrace.StopSignal || st.Sig != int(unix.SIGTRAP) {
		return st, false, err
	}
	st, err = s.classifyTrap(t, st)
	return st, false, err
}

// classifyTrap turns a SIGTRAP into a user stop when it came from our
// breakpoints or watchpoints; others are the program's own and returned.
func (s *Session) classifyTrap(t *rthread, st ptrace.Status) (ptrace.Status, error) {
	info, err := ptrace.GetSiginfo(t.real)
	if err != nil {
		return st, err
	}
	code := ptrace.SiCode(info)
	var regs trace.Regs
	if err := ptrace.GetRegs(t.real, &regs); err != nil {
		return st, err
	}
	switch {
	case code == siKernel && s.isBP(regs[trace.RIP]-1):
		pc := regs[trace.RIP] - 1
		regs[trace.RIP] = pc
		if err := ptrace.SetRegs(t.real, &regs); err != nil {
			return st, fmt.Errorf("move back onto the breakpoint at %#x: %w", pc, err)
		}
		if pc == s.preemptPC {
			if _, user := s.bps[pc]; user && s.cpuidAt {
				// The user's breakpoint on a cpuid replay stops at
				// (cpuid.go): the arrival is the user's first.
				return st, s.userStop(t, StopBreakpoint, pc, 0)
			}
			return st, nil // applyPreempt or runToCpuid decides
		}
		return st, s.userStop(t, StopBreakpoint, pc, 0)
	case code == trapHWBkpt || code == trapBrkpt || code == trapTrace && regs[trace.EFLAGS]&eflagsTF == 0:
		// (A TRAP_TRACE with no trap flag set: a watchpoint's hit whose DR6
		// kept a single-step's BS, which a nested virtual machine did not
		// clear; without a B bit it is the program's.)
		status, err := ptrace.GetDebugReg(t.real, dr6)
		if err != nil {
			return st, err
		}
		if code == trapTrace && status&dr6Hits == 0 {
			return st, nil
		}
		ptrace.SetDebugReg(t.real, dr6, 0)
		if code == trapBrkpt {
			if status&(dr6Hits|dr6Step) != 0 || !s.lostStatus(t, regs[trace.RIP]) {
				return st, nil
			}
			status = s.guessHits(t, true)
		}
		for i := range s.watches {
			if status&(1<<i) != 0 {
				err := s.userStop(t, StopWatchpoint, regs[trace.RIP], i)
				s.stop.Also = uint8(status & (1<<len(s.watches) - 1))
				s.stop.Values = s.watchedValues()
				return st, err
			}
		}
	}
	return st, nil
}

// lostStatus tells whether a SIGTRAP of si_code TRAP_BRKPT with nothing in
// DR6 at rip was a debug exception whose cause the machine lost rather than
// the program's icebp (0xf1, the only instruction Linux reports that way).
// Nested virtual machines drop DR6 now and then: a watchpoint's hit arrives
// with neither its B bit nor, after a single-step, BS.
func (s *Session) lostStatus(t *rthread, rip uint64) bool {
	var b [1]byte
	if _, err := t.proc.mem.ReadAt(b[:], rip-1); err == nil && b[0] == 0xf1 {
		return false
	}
	return true
}

// guessHits stands for DR6's lost B bits: the watchpoints whose bytes changed
// since t was resumed, or, when none did (a write of the value already
// there, or a read) and only a watchpoint can have trapped (orAll), every
// armed one, as the hardware reports all that match.
func (s *Session) guessHits(t *rthread, orAll bool) uint64 {
	now := s.valuesIn(t.proc.mem, nil)
	var hits, all uint64
	for i := range s.watches {
		all |= 1 << i
		if i < len(now) && i < len(t.watchVals) && now[i] != t.watchVals[i] {
			hits |= 1 << i
		}
	}
	if hits == 0 && orAll {
		return all
	}
	return hits
}

func (s *Session) isBP(addr uint64) bool {
	if addr == s.preemptPC && addr != 0 {
		return true
	}
	_, ok := s.bps[addr]
	return ok
}

// userStop records a user stop of t at pc and returns errStopped.
func (s *Session) userStop(t *rthread, kind StopKind, pc uint64, watch int) error {
	t.stopEvent, t.stopPC = s.next, pc
	if kind == StopWatchpoint {
		// A watchpoint traps after the writing instruction: a breakpoint
		// on the next one has not been reached yet, and resuming must
		// report it rather than step over it (a watch on a parameter,
		// written by the prologue, and a breakpoint after the prologue).
		t.stopPC = ^uint64(0)
	}
	s.stop = &Stop{Kind: kind, Tid: t.rec, PC: pc, Watch: watch}
	return errStopped
}

// stepRaw executes one instruction of t without breakpoints. stepped is
// false when the instruction led to a stop the recording is about (a system
// call entry, a fault, a trap): that stop is returned for the event.
func (s *Session) stepRaw(t *rthread) (st ptrace.Status, stepped bool, err error) {
	if err := s.syncWatch(t); err != nil {
		return st, false, err
	}
	if t.resumeSig == 0 && s.atEmulatedCpuid(t) {
		// Not executed here: the event answers it (cpuid.go), as a
		// breakpoint on it would have stopped it.
		return ptrace.Status{Kind: ptrace.StopSignal, Sig: int(unix.SIGTRAP)}, false, nil
	}
	sig, frame := t.takeFrame()
	if err := ptrace.SysemuStep(t.real, sig); err != nil {
		return st, false, err
	}
	if st, err = s.waitFor(t); err != nil {
		return st, false, err
	}
	if frame != nil {
		// The step stopped at the handler's entry.
		if err := s.writeFrame(t, frame, st); err != nil {
			return st, false, err
		}
	}
	if st.Kind == ptrace.StopSyscall {
		// The syscall instruction copied rflags into r11 with the trap
		// flag our single-step set: the program's own flags did not have it.
		var regs trace.Regs
		if err := ptrace.GetRegs(t.real, &regs); err != nil {
			return st, false, err
		}
		if regs[trace.R11]&eflagsTF != 0 {
			regs[trace.R11] &^= eflagsTF
			if err := ptrace.SetRegs(t.real, &regs); err != nil {
				return st, false, fmt.Errorf("clear the trap flag from r11: %w", err)
			}
		}
	}
	if st.Kind != ptrace.StopSignal || st.Sig != int(unix.SIGTRAP) {
		return st, false, nil
	}
	info, err := ptrace.GetSiginfo(t.real)
	if err != nil {
		return st, false, err
	}
	code := ptrace.SiCode(info)
	if code != trapTrace && code != trapHWBkpt && code != trapBrkpt {
		return st, false, nil
	}
	status, _ := ptrace.GetDebugReg(t.real, dr6)
	if code == trapBrkpt {
		var regs trace.Regs
		if err := ptrace.GetRegs(t.real, &regs); err != nil {
			return st, false, err
		}
		if status&(dr6Hits|dr6Step) != 0 || !s.lostStatus(t, regs[trace.RIP]) {
			return st, false, nil
		}
		// The step's own trap, with a watchpoint's if watched bytes changed.
		status = s.guessHits(t, false)
	}
	ptrace.SetDebugReg(t.real, dr6, 0)
	for i := range s.watches {
		if status&(1<<i) != 0 {
			var regs trace.Regs
			ptrace.GetRegs(t.real, &regs)
			return st, true, s.userStop(t, StopWatchpoint, regs[trace.RIP], i)
		}
	}
	return st, true, nil
}

// StepInstruction executes one instruction of the thread that runs next in
// the recording (events of other threads with no user code in between are
// applied first). An instruction that is a system call or traps applies its
// event. The result is a Stop of kind StopStep, or a watchpoint stop.
func (s *Session) StepInstruction() (*Stop, error) {
	return ptrace.DoValue(s.th, s.stepInstruction)
}

func (s *Session) stepInstruction() (*Stop, error) {
	for {
		e, err := s.peek(0)
		if err != nil {
			return nil, err
		}
		if e == nil || s.done {
			return nil, io.EOF
		}
		t := s.threads[e.Tid]
		if t == nil || !runsUserCode(e, t) {
			if _, err := s.step(); err != nil {
				if err == errStopped {
					return s.takeStop(), nil
				}
				return nil, err
			}
			if st := s.takeStop(); st != nil {
				return st, nil
			}
			continue
		}
		st, stepped, err := s.stepRaw(t)
		if err == errStopped {
			return s.takeStop(), nil
		}
		if err != nil {
			return nil, err
		}
		applied := false
		if !stepped {
			// The instruction reached the event: apply it.
			t.pending = &st
			if _, err := s.step(); err != nil && err != errStopped {
				return nil, err
			}
			if st := s.takeStop(); st != nil {
				return st, nil
			}
			applied = true
		}
		var regs trace.Regs
		if t.dead {
			return &Stop{Kind: StopStep, Tid: t.rec, Event: applied}, nil
		}
		if err := ptrace.GetRegs(t.real, &regs); err != nil {
			return nil, err
		}
		t.stopEvent, t.stopPC = s.next, regs[trace.RIP]
		if next, err := s.peek(0); err == nil && next != nil && !applied && next.Tid == t.rec &&
			next.Kind == trace.KindSignal && next.Flags&trace.FlagSyncSignal != 0 && sameGeneralRegs(&next.Regs, &regs) {
			// Arrived on the faulting instruction in the state it faulted
			// in (a loop reaches the pc before, in other states): the fault
			// is this same point (nothing executes before it), so report
			// it here.
			if _, err := s.step(); err != nil && err != errStopped {
				return nil, err
			}
			s.takeStop()
			applied = true
			if err := ptrace.GetRegs(t.real, &regs); err != nil {
				return nil, err
			}
		}
		t.stopEvent, t.stopPC = s.next, regs[trace.RIP]
		return &Stop{Kind: StopStep, Tid: t.rec, PC: regs[trace.RIP], Event: applied}, nil
	}
}

// runsUserCode tells whether applying e first runs t's code: the events
// reached by running the thread, as opposed to those applied where it stands.
func runsUserCode(e *trace.Event, t *rthread) bool {
	switch e.Kind {
	case trace.KindSyscall, trace.KindSyscallEntry, trace.KindRdtsc, trace.KindCpuid, trace.KindRdrand, trace.KindPreempt:
		return true
	case trace.KindSignal:
		return e.Flags&trace.FlagSyncSignal != 0
	}
	return false
}

// takeStop returns and clears the pending user stop.
func (s *Session) takeStop() *Stop {
	st := s.stop
	s.stop = nil
	return st
}

// Continue replays until a user stop (breakpoint, watchpoint) or the end of
// the recording (nil, io.EOF). limit, when > 0, is an event index not to
// go past: the replay stops before applying event limit (nil, nil).
func (s *Session) Continue(limit int64) (*Stop, error) {
	var stop *Stop
	var err error
	s.th.Do(func() {
		if limit > 0 {
			s.batchUntil(limit)
		} else {
			s.batchUntil(-1)
		}
		defer s.batchUntil(0)
		for limit <= 0 || s.next < limit {
			if _, err = s.step(); err != nil {
				if err == errStopped {
					stop, err = s.takeStop(), nil
				}
				return
			}
			if stop = s.takeStop(); stop != nil {
				return
			}
		}
	})
	return stop, err
}

// watchedValues reads the watched locations, to notice writes the kernel
// did for an emulated or re-executed call (debug registers only see the
// program's own writes).
func (s *Session) watchedValues() []uint64 {
	if len(s.watches) == 0 {
		return nil
	}
	return s.valuesIn(s.mem, make([]uint64, 0, len(s.watches)))
}

// valuesIn appends the watched values in memory m to vals; nil when one
// cannot be read (the process ended, or the memory is unmapped: nothing to
// compare).
func (s *Session) valuesIn(m *ptrace.Mem, vals []uint64) []uint64 {
	if m == nil {
		return nil
	}
	for _, w := range s.watches {
		var b [8]byte
		if _, err := m.ReadAt(b[:w.Len], w.Addr); err != nil {
			return nil
		}
		vals = append(vals, binary.LittleEndian.Uint64(b[:]))
	}
	return vals
}

// sameGeneralRegs says whether two register sets have the same pc and
// general registers: a thread at the same pc with other registers is at
// another pass of the same code.
func sameGeneralRegs(a, b *trace.Regs) bool {
	if a[trace.RIP] != b[trace.RIP] {
		return false
	}
	for _, r := range x86RegOrder {
		if a[r] != b[r] {
			return false
		}
	}
	return true
}
