package debugger

import (
	"fmt"
	"strconv"

	"github.com/rewind-debugger/rewind/dwarf"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Snapshot is what the UI shows of the session at the current moment:
// plain data, built in the background after each command, so that panes
// render without touching the engine.
type Snapshot struct {
	Moment string // "#1234 hit 2 of 0x…"
	Event  int64
	Total  int64 // events in the recording
	Thread int32
	// Stop is the last stop (nil before the first motion command).
	Stop *StopInfo
	// Frames is the stack of the current thread; Selected the selected one.
	Frames   []FrameInfo
	Selected int
	Args     []VarNode
	Locals   []VarNode
	// Registers are the general registers of the selected frame, in gdb's
	// order; FPRegisters the SSE/x87 ones.
	Registers   []Register
	FPRegisters []Register
	// Disasm is the code around the selected frame's pc.
	Disasm []DisasmLine
	// Source is the file of the selected frame (nil without line info).
	Source      *SourceView
	Threads     []ThreadInfo
	Breakpoints []BreakpointInfo
	Watches     []WatchpointInfo
	// Density counts events per bucket over the whole recording, for the
	// timeline's bar; NowBucket is where the current moment falls.
	Density []uint32
	// Processes are the recording's processes; Process is the recorded
	// pid of the one debugged.
	Processes []ProcessInfo
	Process   int32
}

// VarNode is a variable with its expandable parts.
type VarNode struct {
	Name, Type, Value string
	Children          []VarNode
}

// Register is one register and its value ("0x401136"); Flags decodes
// eflags ("[ ZF PF ]").
type Register struct {
	Name, Value, Flags string
}

// DisasmLine is one instruction.
type DisasmLine struct {
	Addr       uint64
	Symbol     string // "main+12"
	Text       string
	Current    bool
	Breakpoint bool
}

// SourceView is a source file with the places to mark.
type SourceView struct {
	Path        string
	Lines       []string
	Current     int   // the selected frame's line
	Breakpoints []int // lines with a breakpoint
	WatchLine   int   // the line of the last watchpoint hit (0: none)
	// Packed says the lines are the recording's copy: the file is not on
	// this machine (rewind pack).
	Packed bool
}

// ThreadInfo is one thread.
type ThreadInfo struct {
	Tid      int32
	Current  bool
	PC       string
	Function string
}

// BreakpointInfo is one breakpoint.
type BreakpointInfo struct {
	ID        int
	Spec      string
	Condition string
	Addrs     []string
	File      string
	Line      int
	Pending   bool
	// Temporary is a tbreak; Disabled ones are listed but not armed.
	Temporary, Disabled bool
}

// WatchpointInfo is one watchpoint.
type WatchpointInfo struct {
	ID   int
	Expr string
	// Location is `*(TYPE *)ADDR` for a watch -l ("" otherwise).
	Location string
	Addr     string
	Size     int
	Access   bool
	// Disabled ones are listed but not armed.
	Disabled bool
	// EventWrites is how many writes to the location the current event
	// has made up to the current moment: the moment's place among the
	// writes of history that share its event (their "hits"), -1 when
	// the session does not know it (see Timeline.WritesSoFar).
	EventWrites int
}

// densityBuckets is the resolution of the timeline's bar.
const densityBuckets = 512

// Snapshot builds the snapshot of the current moment. Reading stops at
// what is cheap: locals expand two levels, disassembly is 64 instructions.
func (s *Session) Snapshot() *Snapshot {
	sn := &Snapshot{Moment: s.tl.Now().String(), Event: s.tl.When(), Total: s.tl.Index().Total(), Thread: s.currentThread(), Stop: s.lastStop}
	if frames, err := s.stack(sn.Thread); err == nil && len(frames) > 0 {
		sel := min(s.frame, len(frames)-1)
		sn.Selected = sel
		for i := range frames {
			sn.Frames = append(sn.Frames, s.frameInfo(frames, i))
		}
		if args, locals, err := s.symbols().FrameVariables(frames, sel, s.mem()); err == nil {
			sn.Args, sn.Locals = s.varNodes(args), s.varNodes(locals)
		}
		f := frames[sel]
		sn.Registers = s.frameRegisters(sn.Thread, f, sel)
		sn.Disasm = s.disasmAround(f.PC, sel == 0)
		if f.File != "" {
			if src, err := s.Source(f.File); err == nil {
				sv := &SourceView{Path: f.File, Lines: src.Lines, Current: f.Line, Packed: src.Packed}
				for _, b := range s.bps {
					for _, a := range b.addrs {
						if l, ok := s.symbols().LineAt(a); ok && l.File == f.File {
							sv.Breakpoints = append(sv.Breakpoints, l.Line)
						}
					}
				}
				if st := s.lastStop; st != nil && (st.Reason == "watchpoint" || st.Reason == "origin") && st.FullName == f.File {
					sv.WatchLine = st.Line
				}
				sn.Source = sv
			}
		}
	}
	sn.FPRegisters = s.fpRegisters(sn.Thread)
	sn.Threads = s.threadInfos(sn.Thread)
	for _, b := range s.bps {
		bi := BreakpointInfo{ID: b.id, Spec: b.spec, Condition: b.cond, Pending: len(b.addrs) == 0, Temporary: b.temp, Disabled: b.disabled}
		for _, a := range b.addrs {
			bi.Addrs = append(bi.Addrs, fmt.Sprintf("%#x", a))
		}
		if len(b.addrs) > 0 {
			if l, ok := s.symbols().LineAt(b.addrs[0]); ok {
				bi.File, bi.Line = dwarf.ShortFile(l.File), l.Line
			}
		}
		sn.Breakpoints = append(sn.Breakpoints, bi)
	}
	for _, w := range s.watches {
		wi := WatchpointInfo{ID: w.id, Expr: w.expr, Location: w.location, Addr: fmt.Sprintf("%#x", w.wp.Addr), Size: w.wp.Len, Access: w.wp.ReadWrite, Disabled: w.disabled, EventWrites: -1}
		if n, ok := s.tl.WritesSoFar(w.wp); ok {
			wi.EventWrites = n
		}
		sn.Watches = append(sn.Watches, wi)
	}
	sn.Density = s.density()
	sn.Process, sn.Processes = s.Process(), s.ProcessInfos()
	return sn
}

// varNodes renders variables two levels deep.
func (s *Session) varNodes(vars []dwarf.Variable) []VarNode {
	out := make([]VarNode, 0, len(vars))
	for _, v := range vars {
		out = append(out, s.varNode(v.Value, 2))
	}
	return out
}

func (s *Session) varNode(v dwarf.Value, depth int) VarNode {
	n := VarNode{Name: v.Name, Value: s.format(v, 0)}
	if v.Type != nil {
		n.Type = v.Type.Name
	}
	if depth > 0 && !v.Optimized && v.Err == nil {
		for _, c := range s.symbols().Children(v, s.mem(), dwarf.FormatOptions{MaxElements: 64}) {
			n.Children = append(n.Children, s.varNode(c, depth-1))
		}
	}
	return n
}

// frameRegisters lists the registers of a frame: all of them for frame 0,
// the ones the unwinder recovered for callers.
func (s *Session) frameRegisters(tid int32, f dwarf.Frame, level int) []Register {
	regs, err := s.tl.Session().Regs(tid)
	if err != nil {
		return nil
	}
	var out []Register
	if level > 0 {
		for _, n := range gdbRegOrder {
			v := "<not saved>"
			if f.Regs.Valid[n] {
				v = fmt.Sprintf("%#x", f.Regs.R[n])
			}
			out = append(out, Register{Name: dwarf.RegName(uint64(n)), Value: v})
		}
		return out
	}
	for _, i := range []int{trace.RAX, trace.RBX, trace.RCX, trace.RDX, trace.RSI, trace.RDI, trace.RBP, trace.RSP,
		trace.R8, trace.R9, trace.R10, trace.R11, trace.R12, trace.R13, trace.R14, trace.R15, trace.RIP, trace.EFLAGS,
		trace.CS, trace.SS, trace.DS, trace.ES, trace.FS, trace.GS, trace.FSBase, trace.GSBase} {
		r := Register{Name: trace.RegNames[i], Value: fmt.Sprintf("%#x", regs[i])}
		if i == trace.EFLAGS {
			r.Flags = decodeFlags(regs[i])
		}
		out = append(out, r)
	}
	return out
}

// fpRegisters lists xmm0-15 of a thread as two 64-bit halves.
func (s *Session) fpRegisters(tid int32) []Register {
	x, err := s.tl.Session().FPRegs(tid)
	if err != nil || len(x) < 160+256 {
		return nil
	}
	var out []Register
	for i := 0; i < 16; i++ {
		b := x[160+16*i : 176+16*i]
		var lo, hi uint64
		for j := 7; j >= 0; j-- {
			lo = lo<<8 | uint64(b[j])
			hi = hi<<8 | uint64(b[8+j])
		}
		out = append(out, Register{Name: "xmm" + strconv.Itoa(i), Value: fmt.Sprintf("0x%016x%016x", hi, lo)})
	}
	return out
}

// disasmAround decodes instructions from a little before pc.
func (s *Session) disasmAround(pc uint64, exact bool) []DisasmLine {
	t := s.symbols()
	start := pc
	if fn := t.FunctionAt(pc); fn != nil {
		start = fn.Low
	} else if sym, _, ok := t.At(pc); ok {
		start = sym.Addr
	}
	if pc-start > 512 {
		// Far into a long function: start at a line boundary near pc.
		if lo, _, ok := t.LineRange(pc); ok && pc-lo < 512 {
			start = lo
		} else {
			start = pc
		}
	}
	insts, err := t.Disassemble(s.mem(), start, 64*15)
	if err != nil {
		return nil
	}
	bps := map[uint64]bool{}
	for _, b := range s.bps {
		for _, a := range b.addrs {
			bps[a] = true
		}
	}
	// Keep a window with pc in it.
	idx := 0
	for i, in := range insts {
		if in.Addr == pc {
			idx = i
		}
	}
	lo := max(0, idx-16)
	hi := min(len(insts), lo+64)
	var out []DisasmLine
	for _, in := range insts[lo:hi] {
		sym := ""
		if sy, off, ok := t.At(in.Addr); ok {
			sym = sy.Name + "+" + strconv.FormatUint(off, 10)
		}
		out = append(out, DisasmLine{Addr: in.Addr, Symbol: sym, Text: in.Text, Current: in.Addr == pc, Breakpoint: bps[in.Addr]})
	}
	return out
}

// density counts events per bucket, once per session.
func (s *Session) density() []uint32 {
	if s.densityCache != nil {
		return s.densityCache
	}
	total := s.tl.Index().Total()
	n := int64(densityBuckets)
	if total < n {
		n = max(total, 1)
	}
	d := make([]uint32, n)
	for i := int64(0); i < total; i++ {
		d[i*n/max(total, 1)]++
	}
	s.densityCache = d
	return d
}

// Memory reads n bytes at the address of an expression, for the Memory
// pane.
func (s *Session) Memory(expr string, n int) (uint64, []byte, error) {
	addr, err := s.evalAddress(expr)
	if err != nil {
		return 0, nil, err
	}
	b, err := s.tl.Session().ReadMem(addr, n)
	if err != nil && len(b) == 0 {
		return addr, nil, fmt.Errorf("Cannot access memory at address %#x", addr)
	}
	return addr, b, nil
}

// Path is the trace file of the session.
func (s *Session) Path() string { return s.path }

// SetProgress installs a progress callback for long operations: it gets
// (events replayed, total) and returns false to cancel. The session stays
// at a consistent moment after a cancel.
func (s *Session) SetProgress(f func(done, total int64) bool) { s.tl.Progress = f }

// Header is the recording's header: program, arguments, environment,
// machine.
func (s *Session) Header() *trace.Header { return s.tl.Session().Header() }

// threadInfos lists the live threads with where each stands (current
// marks one): the Threads pane's and the DAP threads request's list,
// cheaper than info threads (no frames, no names).
func (s *Session) threadInfos(current int32) []ThreadInfo {
	var out []ThreadInfo
	for _, t := range s.tl.Session().Threads() {
		ti := ThreadInfo{Tid: t.Tid, Current: t.Tid == current}
		if regs, err := s.tl.Session().Regs(t.Tid); err == nil {
			ti.PC = fmt.Sprintf("%#x", regs[trace.RIP])
			ti.Function, _ = s.symbolize(regs[trace.RIP])
		}
		out = append(out, ti)
	}
	return out
}

// ThreadInfos lists the live threads with where each stands.
func (s *Session) ThreadInfos() []ThreadInfo { return s.threadInfos(s.currentThread()) }
