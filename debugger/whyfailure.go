package debugger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/arch/x86/x86asm"
	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/dwarf"
	"github.com/rewind-debugger/rewind/engine/insn"
	"github.com/rewind-debugger/rewind/engine/timeline"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// failure is the failure why starts from, and what the chain needs of it.
type failure struct {
	WhyFailure
	tid int32
	// threadEnds are the events where the process's threads ended.
	threadEnds map[int32]int64
	// verdict is said when there is no value to follow.
	verdict string
}

// failureEvents is what the recording says of the debugged process's end.
type failureEvents struct {
	fault      int64 // the last synchronous fault (SIGSEGV, SIGBUS, SIGFPE, SIGILL), -1 if none
	faultTid   int32
	faultAddr  uint64
	faultSig   int32
	stderr     int64 // the last write to stderr, -1 if none
	stderrTid  int32
	stderrAll  string // the end of what it wrote to stderr
	stdout     int64  // the last write to stdout, -1 if none
	stdoutTid  int32
	stdoutAll  string // the end of what it wrote to stdout
	exited     bool
	status     int32
	killedBy   int32 // the fatal signal, 0 for an exit
	exitCode   int
	threadEnds map[int32]int64
}

// scanFailure reads the events of the debugged process.
func (s *Session) scanFailure() (*failureEvents, error) {
	fe := &failureEvents{fault: -1, stderr: -1, stdout: -1, threadEnds: map[int32]int64{}}
	tids := map[int32]bool{}
	for _, p := range s.procs {
		if p.Pid == s.Process() {
			for _, t := range p.Tids {
				tids[t] = true
			}
			fe.exited, fe.status = p.Exited, p.Status
		}
	}
	rd, err := trace.Open(s.path)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	var outs, errs []outWrite
	var faultPC uint64
	for i := int64(0); ; i++ {
		e, err := rd.Next()
		if errors.Is(err, io.EOF) || (err == nil && e == nil) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(tids) > 0 && !tids[e.Tid] {
			continue
		}
		switch {
		case e.Kind == trace.KindThreadExit || e.Kind == trace.KindExit:
			fe.threadEnds[e.Tid] = i
		case e.Kind == trace.KindSignal && e.Flags&trace.FlagSyncSignal != 0 && fatalFault(e.Signo):
			if fe.fault >= 0 && fe.faultTid == e.Tid && faultPC == e.Regs[trace.RIP] && fe.faultSig == e.Signo {
				// The same fault again, after a handler that returned to
				// it (Rust's runtime resets SIGSEGV's handler and lets
				// it fault once more): the first has the program's
				// registers, the second those sigreturn restored.
				break
			}
			fe.fault, fe.faultTid, fe.faultSig, faultPC = i, e.Tid, e.Signo, e.Regs[trace.RIP]
			if len(e.Siginfo) >= 24 {
				fe.faultAddr = binary.LittleEndian.Uint64(e.Siginfo[16:24])
			}
		case e.Kind != trace.KindSyscall && e.Kind != trace.KindSyscallEntry:
		case e.Syscall == unix.SYS_WRITE && e.Regs[trace.RDI] == 1:
			fe.stdout, fe.stdoutTid = i, e.Tid
			outs = keepWrite(outs, outWrite{i, e.Tid, e.Regs[trace.RSI], e.Regs[trace.RDX], e.Data})
		case e.Syscall == unix.SYS_WRITE && e.Regs[trace.RDI] == 2:
			fe.stderr, fe.stderrTid = i, e.Tid
			errs = keepWrite(errs, outWrite{i, e.Tid, e.Regs[trace.RSI], e.Regs[trace.RDX], e.Data})
		}
	}
	fe.stdoutAll, fe.stderrAll = s.writtenText(outs), s.writtenText(errs)
	if fe.exited {
		ws := unix.WaitStatus(fe.status)
		if ws.Signaled() {
			fe.killedBy = int32(ws.Signal())
		} else {
			fe.exitCode = ws.ExitStatus()
		}
	}
	return fe, nil
}

// outWrite is a write to stdout or stderr: the event keeps its bytes, or
// replay reads them from the buffer (a write that blocked keeps only its
// first ones).
type outWrite struct {
	event int64
	tid   int32
	addr  uint64
	n     uint64
	data  []byte
}

// maxOutWrites is how many of the last writes to a stream why reads.
const maxOutWrites = 1024

func keepWrite(ws []outWrite, w outWrite) []outWrite {
	if len(ws) == maxOutWrites {
		ws = append(ws[:0], ws[1:]...)
	}
	return append(ws, w)
}

// writtenText is what the writes wrote, read from the replay where their
// events do not hold all of it.
func (s *Session) writtenText(ws []outWrite) string {
	var b strings.Builder
	for _, w := range ws {
		data := w.data
		if uint64(len(data)) < w.n {
			if err := s.tl.Goto(timeline.Moment{Event: w.event + 1, Tid: w.tid}); err == nil {
				buf := make([]byte, min(w.n, 4096))
				if n, _ := s.mem().ReadAt(buf, w.addr); n > 0 {
					data = buf[:n]
				}
			}
		}
		b.Write(data)
	}
	return lastBytes(b.String(), 16<<10)
}

func fatalFault(sig int32) bool {
	switch unix.Signal(sig) {
	case unix.SIGSEGV, unix.SIGBUS, unix.SIGFPE, unix.SIGILL:
		return true
	}
	return false
}

// lastBytes is the end of s, at most n bytes.
func lastBytes(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// failureLines are the lines failing programs and test runners write
// about their failure, the most telling first: pytest's summary, go
// test's, a Rust panic, a C assert, a Go panic; then any line that speaks
// of a failure. A match takes the line after it too (go test's detail).
var failureLines = []*regexp.Regexp{
	regexp.MustCompile(`^FAILED `),
	regexp.MustCompile(`^\s*--- FAIL:`),
	regexp.MustCompile(`panicked at`),
	regexp.MustCompile(`Assertion .* failed`),
	regexp.MustCompile(`^panic: `),
	regexp.MustCompile(`(?i)fail|error|panic|assert|fatal`),
}

// failureText is what a message says of the failure: its most telling
// line (failureLines) and the one after it, else its last line.
func failureText(msg string) string {
	lines := strings.Split(strings.TrimSpace(msg), "\n")
	for _, re := range failureLines {
		for i, l := range lines {
			if !re.MatchString(l) {
				continue
			}
			end := min(i+2, len(lines))
			if strings.HasPrefix(l, "FAILED ") {
				end = i + 1 // a line of its own
			}
			var parts []string
			for _, p := range lines[i:end] {
				parts = append(parts, strings.TrimSpace(p))
			}
			return firstLineOf(strings.Join(parts, " / "))
		}
	}
	return firstLineOf(lines[len(lines)-1])
}

func firstLine(s string) string { return firstLineOf(s) }

func firstLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// findFailure goes to the failure and returns it, with the location that
// holds the bad value there (nil when there is none to follow).
func (s *Session) findFailure() (*failure, *whyCursor, error) {
	fe, err := s.scanFailure()
	if err != nil {
		return nil, nil, err
	}
	f, cur, err := s.failureOf(fe)
	if f != nil {
		f.threadEnds = fe.threadEnds
	}
	return f, cur, err
}

// failureOf tells which failure the events show, and goes there.
func (s *Session) failureOf(fe *failureEvents) (*failure, *whyCursor, error) {
	failed := fe.killedBy != 0 || fe.exitCode != 0
	if !fe.exited {
		failed = true // cut short: the last fault or error is what there is
	}
	switch {
	case fe.killedBy == int32(unix.SIGABRT):
		return s.abortFailure(fe)
	case fe.fault >= 0 && failed:
		return s.faultFailure(fe)
	case failed && fe.stderr >= 0:
		return s.messageFailure(fe, fe.stderr, fe.stderrTid, "stderr", fe.stderrAll)
	case failed && fe.stdout >= 0:
		return s.messageFailure(fe, fe.stdout, fe.stdoutTid, "stdout", fe.stdoutAll)
	case fe.killedBy != 0:
		return s.endFailure(fmt.Sprintf("killed by %s", unix.SignalName(unix.Signal(fe.killedBy))))
	case fe.exitCode != 0:
		return s.endFailure(fmt.Sprintf("exit status %d", fe.exitCode))
	}
	return nil, nil, errNoFailure
}

// userFrame is the first frame with a source line (the program's code
// rather than the C library's), and its level.
func (s *Session) userFrame(tid int32) (int, uint64) {
	frames, err := s.stack(tid)
	if err != nil || len(frames) == 0 {
		return 0, 0
	}
	for i, f := range frames {
		pc := f.PC
		if i > 0 {
			pc-- // a caller's line is the call's
		}
		if s.userCode(pc) {
			return i, pc
		}
	}
	return 0, frames[0].PC
}

// inLibrary says whether pc is in a system library (the C library has
// lines too where its debug information is installed).
func (s *Session) inLibrary(pc uint64) bool {
	img := s.symbols().ImageAt(pc)
	if img != nil && (strings.Contains(img.Path, "/lib/") || strings.Contains(img.Path, "/lib64/")) {
		return true
	}
	// The languages' own libraries, linked into the program.
	if l, ok := s.symbols().LineAt(pc); ok {
		if strings.HasPrefix(l.File, "/rustc/") || (s.goRoot() != "" && strings.HasPrefix(l.File, s.goRoot())) {
			return true
		}
	}
	fn := s.FunctionAt(pc)
	for _, p := range []string{"std::", "core::", "alloc::", "runtime.", "__rust"} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// userCode says whether pc is in the program's own code: with lines, not
// in a system library.
func (s *Session) userCode(pc uint64) bool {
	_, ok := s.symbols().LineAt(pc)
	return ok && !s.inLibrary(pc)
}

// failureAt fills the failure's place and stack at the current moment.
func (s *Session) failureAt(f *failure, tid int32) {
	f.tid = tid
	s.thread, s.frame = tid, 0
	_, pc := s.userFrame(tid)
	f.Place = s.place(tid, pc)
	f.Stack = s.shortStack(tid)
}

// maxWhyFrames bounds the failure's stack: the frames that matter are the
// innermost.
const maxWhyFrames = 12

// shortStack is the backtrace of thread tid, a line a frame: the function
// and its line, without the arguments (a Go *testing.T is pages long).
func (s *Session) shortStack(tid int32) []string {
	frames, err := s.stack(tid)
	if err != nil {
		return nil
	}
	var out []string
	for i, fr := range frames {
		if i == maxWhyFrames {
			out = append(out, fmt.Sprintf("... %d more", len(frames)-i))
			break
		}
		pc := fr.PC
		if i > 0 {
			pc--
		}
		var info StopInfo
		s.placeInfo(&info, pc)
		line := fmt.Sprintf("#%d  %s", i, info.Function)
		if info.Function == "" {
			line = fmt.Sprintf("#%d  %#x", i, fr.PC)
		}
		if info.File != "" {
			line += fmt.Sprintf(" at %s:%d", info.File, info.Line)
		}
		out = append(out, line)
	}
	return out
}

// goRoot is the directory of a Go program's standard library sources,
// read from where its runtime's lines are ("" for another program).
func (s *Session) goRoot() string {
	if !s.gorootRead {
		s.gorootRead = true
		for _, fn := range s.symbols().FindFunction("runtime.main") {
			if l, ok := s.symbols().LineAt(fn.Low); ok {
				if i := strings.Index(l.File, "/src/runtime/"); i > 0 {
					s.goroot = l.File[:i+len("/src/")]
				}
			}
		}
	}
	return s.goroot
}

// endFailure is a failure with nothing to follow: the end of the process.
func (s *Session) endFailure(desc string) (*failure, *whyCursor, error) {
	if err := s.tl.Goto(s.tl.End()); err != nil {
		return nil, nil, err
	}
	f := &failure{WhyFailure: WhyFailure{Kind: "exit", Description: desc}}
	s.failureAt(f, s.tl.Now().Tid)
	f.verdict = "The program ended so without a fault or a message on stderr: no bad value to follow."
	return f, nil, nil
}

// messageFailure is a non-zero exit: the failure is the last message the
// program wrote (on stderr, else on stdout, where test runners report),
// where its stack shows which code reported it.
func (s *Session) messageFailure(fe *failureEvents, event int64, tid int32, stream, all string) (*failure, *whyCursor, error) {
	text := failureText(all)
	if err := s.tl.Goto(timeline.Moment{Event: event + 1, Tid: tid}); err != nil {
		return nil, nil, err
	}
	desc := fmt.Sprintf("exit status %d after writing to %s: %q", fe.exitCode, stream, text)
	if fe.killedBy != 0 {
		desc = fmt.Sprintf("killed by %s after writing to %s: %q", unix.SignalName(unix.Signal(fe.killedBy)), stream, text)
	}
	f := &failure{WhyFailure: WhyFailure{Kind: "exit", Description: desc}}
	s.failureAt(f, tid)
	f.Reported = s.reportedAt(text)
	if f.Reported == nil {
		f.Reported = s.reportedAt(all)
	}
	where := placeWhere(f.Place)
	if f.Reported != nil {
		where = placeWhere(*f.Reported)
	}
	f.verdict = fmt.Sprintf("The program reported the failure itself, at %s: no faulting value to follow from there (origin EXPR follows one you choose).", where)
	return f, nil, nil
}

// sourcePosRE matches a source position a message names (a test's
// "fails_test.go:16", a panic's "main.rs:25:22", an assert's "a.c:30").
var sourcePosRE = regexp.MustCompile(`([A-Za-z0-9_./+-]+\.(?:go|c|h|cc|cpp|cxx|hpp|rs|zig|py)):(\d+)`)

// reportedAt is the place of the program's code a failure message names,
// when the debug information knows it.
func (s *Session) reportedAt(msg string) *WhyPlace {
	m := sourcePosRE.FindStringSubmatch(msg)
	if m == nil {
		return nil
	}
	lines, err := s.resolveSource(m[1] + ":" + m[2])
	if err != nil || len(lines) == 0 {
		// A file the debug information does not know (a Python test):
		// its line, from the file where the program ran.
		n, _ := strconv.Atoi(m[2])
		path := m[1]
		if !filepath.IsAbs(path) {
			path = filepath.Join(s.Header().Cwd, path)
		}
		p := &WhyPlace{File: filepath.Base(m[1]), Line: n}
		if src := s.sourceLine(path, n); src != "" {
			_, text, _ := strings.Cut(src, "\t")
			p.Source = strings.TrimSpace(text)
		}
		return p
	}
	l := lines[0]
	p := &WhyPlace{PC: fmt.Sprintf("%#x", l.Addr), Function: s.FunctionAt(l.Addr), File: dwarf.ShortFile(l.File), Line: l.Line}
	if src := s.sourceLine(l.File, l.Line); src != "" {
		_, text, _ := strings.Cut(src, "\t")
		p.Source = strings.TrimSpace(text)
	}
	return p
}

// faultFailure is a fault: the chain starts with the register that held
// the bad address (or divisor, or jump target).
func (s *Session) faultFailure(fe *failureEvents) (*failure, *whyCursor, error) {
	if err := s.tl.Goto(timeline.Moment{Event: fe.fault, Tid: fe.faultTid}); err != nil {
		return nil, nil, err
	}
	for {
		st, err := s.tl.Continue()
		if err != nil {
			return nil, nil, fmt.Errorf("go to the fault at event #%d: %w", fe.fault, err)
		}
		if st.Reason == timeline.ReasonSignal || s.tl.When() > fe.fault {
			break
		}
	}
	tid := fe.faultTid
	regs, err := s.tl.Session().Regs(tid)
	if err != nil {
		return nil, nil, err
	}
	sig := unix.SignalName(unix.Signal(fe.faultSig))
	f := &failure{WhyFailure: WhyFailure{Kind: "signal"}}
	s.failureAt(f, tid)
	pc := regs[trace.RIP]
	f.Place = s.place(tid, pc)
	inst, ok := s.decodeAt(pc)
	if !ok {
		// The pc itself is bad: the call, jump or return before it
		// brought it there.
		f.Description = fmt.Sprintf("%s: the program jumped to %#x, where there is no code", sig, pc)
		return s.badTarget(f, pc)
	}
	cur, desc := faultOperand(inst, &regs)
	f.Description = fmt.Sprintf("%s at %s (%s)", sig, placeWhere(f.Place), desc)
	if cur == nil {
		f.verdict = "The faulting instruction's operands hold no register to follow."
		return f, nil, nil
	}
	cur.tid = tid
	return f, cur, nil
}

// badTarget follows the value a call or return took the pc to. A fault
// at a pc with no code ran no instruction there: the call before it is
// found from the return address it pushed (stepping back from such a
// fault is not possible), a return from the slot it popped.
func (s *Session) badTarget(f *failure, target uint64) (*failure, *whyCursor, error) {
	regs, err := s.tl.Session().Regs(f.tid)
	if err != nil {
		return nil, nil, err
	}
	sp := regs[trace.RSP]
	var word [8]byte
	if _, err := s.mem().ReadAt(word[:], sp); err == nil {
		ret := binary.LittleEndian.Uint64(word[:])
		before := make([]byte, insn.MaxLen)
		if _, err := s.mem().ReadAt(before, ret-insn.MaxLen); err == nil {
			if k := insn.CallLenBefore(before); k > 0 {
				return s.badCall(f, ret-uint64(k), target)
			}
		}
	}
	// A return to the target: the slot below the stack pointer held it.
	if _, err := s.mem().ReadAt(word[:], sp-8); err == nil && binary.LittleEndian.Uint64(word[:]) == target {
		f.Description += " (a return popped it from the stack)"
		return f, &whyCursor{reg: -1, addr: sp - 8, size: 8, what: "the return address", tid: f.tid}, nil
	}
	f.verdict = fmt.Sprintf("The jump to %#x came from neither a call nor a return the stack shows: no value to follow.", target)
	return f, nil, nil
}

// badCall goes back to the call at pc that jumped to target and follows
// its operand.
func (s *Session) badCall(f *failure, pc, target uint64) (*failure, *whyCursor, error) {
	st, err := s.tl.ReverseContinueWith([]uint64{pc}, nil)
	if err != nil || st.Reason == timeline.ReasonStart {
		f.verdict = fmt.Sprintf("Could not go back to the call at %#x that jumped to %#x.", pc, target)
		return f, nil, nil
	}
	regs, err := s.tl.Session().Regs(f.tid)
	if err != nil {
		return nil, nil, err
	}
	inst, ok := s.decodeAt(pc)
	if !ok || inst.Op != x86asm.CALL {
		f.verdict = fmt.Sprintf("The instruction at %#x is not the call that jumped to %#x.", pc, target)
		return f, nil, nil
	}
	f.Place = s.place(f.tid, pc)
	f.Description += fmt.Sprintf(", called by %s at %s", x86asm.GNUSyntax(inst, pc, nil), placeWhere(f.Place))
	switch a := inst.Args[0].(type) {
	case x86asm.Reg:
		if r, ok := regIndex(a); ok {
			return f, &whyCursor{reg: r, what: "$" + trace.RegNames[r], tid: f.tid}, nil
		}
	case x86asm.Mem:
		addr := effectiveAddr(a, &regs, pc, inst.Len)
		return f, &whyCursor{reg: -1, addr: addr, size: 8, what: s.nameAddress(f.tid, addr), tid: f.tid}, nil
	}
	f.verdict = fmt.Sprintf("The call at %#x has no register or memory operand to follow.", pc)
	return f, nil, nil
}

// faultOperand is the location to follow from a faulting instruction: the
// base (or index) register of its memory operand, or a divisor.
func faultOperand(inst x86asm.Inst, regs *trace.Regs) (*whyCursor, string) {
	text := x86asm.GNUSyntax(inst, regs[trace.RIP], nil)
	if inst.Op == x86asm.DIV || inst.Op == x86asm.IDIV {
		switch a := inst.Args[0].(type) {
		case x86asm.Reg:
			if r, ok := regIndex(a); ok {
				return &whyCursor{reg: r, what: "$" + trace.RegNames[r]}, fmt.Sprintf("%s divides by %s = %#x", text, trace.RegNames[r], regs[r])
			}
		case x86asm.Mem:
			addr := effectiveAddr(a, regs, regs[trace.RIP], inst.Len)
			return &whyCursor{reg: -1, addr: addr, size: inst.MemBytes}, fmt.Sprintf("%s divides by the value at %#x", text, addr)
		}
	}
	for _, arg := range inst.Args {
		m, ok := arg.(x86asm.Mem)
		if !ok {
			continue
		}
		// The kernel says 0 for a non-canonical address: computed, it is
		// the one the instruction used.
		addr := effectiveAddr(m, regs, regs[trace.RIP], inst.Len)
		for _, r := range []x86asm.Reg{m.Base, m.Index} {
			if r == 0 || r == x86asm.RSP || r == x86asm.RBP || r == x86asm.RIP {
				continue
			}
			if i, ok := regIndex(r); ok {
				return &whyCursor{reg: i, what: "$" + trace.RegNames[i]},
					fmt.Sprintf("%s accesses %#x through %s = %#x", text, addr, trace.RegNames[i], regs[i])
			}
		}
		return nil, fmt.Sprintf("%s accesses %#x", text, addr)
	}
	return nil, text
}

// abortFailure is SIGABRT: a failed assert (the chain starts with the
// asserted expression's first variable) or a plain abort.
func (s *Session) abortFailure(fe *failureEvents) (*failure, *whyCursor, error) {
	if err := s.tl.Goto(s.tl.End()); err != nil {
		return nil, nil, err
	}
	end := s.tl.Now()
	var entries []uint64
	for _, sym := range s.symbols().LookupAll("__assert_fail") {
		if sym.Func && sym.Addr != 0 {
			entries = append(entries, sym.Addr)
		}
	}
	f := &failure{WhyFailure: WhyFailure{Kind: "abort", Description: "abort() called"}}
	if len(entries) > 0 {
		st, err := s.tl.ReverseContinueWith(entries, nil)
		if err == nil && st.Reason != timeline.ReasonStart {
			return s.assertFailure(f, st.Moment.Tid)
		}
		if err := s.tl.Goto(end); err != nil {
			return nil, nil, err
		}
	}
	s.failureAt(f, end.Tid)
	f.Description = fmt.Sprintf("abort() called at %s", placeWhere(f.Place))
	if msg := strings.TrimSpace(fe.stderrAll); msg != "" {
		f.Description += fmt.Sprintf(" after writing to stderr: %q", failureText(msg))
		if cur := s.namedValue(end.Tid, msg); cur != nil {
			f.Description += fmt.Sprintf("; the message names %s = %s", cur.what, cur.value)
			return f, &cur.whyCursor, nil
		}
	}
	f.verdict = "The program aborted itself without an assertion: no value to follow (origin EXPR follows one you choose)."
	return f, nil, nil
}

// hexRE matches the addresses and values a runtime's message names.
var hexRE = regexp.MustCompile(`0x[0-9a-fA-F]{4,16}`)

// namedCursor is a variable whose value a failure message names.
type namedCursor struct {
	whyCursor
	value string
}

// namedValue finds, in the failing frame of thread tid (the first of the
// program's own), a variable holding a value the message names: a panic
// that prints the bad pointer (Rust's misaligned dereference, say) names
// the value to follow.
func (s *Session) namedValue(tid int32, msg string) *namedCursor {
	want := map[uint64]bool{}
	for _, h := range hexRE.FindAllString(msg, -1) {
		if v, err := strconv.ParseUint(h[2:], 16, 64); err == nil && v >= 0x1000 {
			want[v] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	level, _ := s.userFrame(tid)
	frames, err := s.stack(tid)
	if err != nil || level >= len(frames) {
		return nil
	}
	args, locals, err := s.symbols().FrameVariables(frames, level, s.mem())
	if err != nil {
		return nil
	}
	for _, v := range append(locals, args...) {
		if !v.InMem || v.Type == nil || v.Type.Size != 8 {
			continue
		}
		var b [8]byte
		if n, _ := s.mem().ReadAt(b[:], v.Addr); n < 8 {
			continue
		}
		if val := binary.LittleEndian.Uint64(b[:]); want[val] {
			return &namedCursor{whyCursor{reg: -1, addr: v.Addr, size: 8, what: v.Name, tid: tid}, fmt.Sprintf("%#x", val)}
		}
	}
	return nil
}

// assertFailure stands at __assert_fail's entry: its first argument is the
// asserted expression, whose variables are read in the caller's frame.
func (s *Session) assertFailure(f *failure, tid int32) (*failure, *whyCursor, error) {
	regs, err := s.tl.Session().Regs(tid)
	if err != nil {
		return nil, nil, err
	}
	text := s.readCString(regs[trace.RDI], 200)
	f.Kind = "assert"
	f.Description = fmt.Sprintf("assertion `%s' failed", text)
	s.failureAt(f, tid)
	level, _ := s.userFrame(tid)
	f.Description += " at " + placeWhere(f.Place)
	s.frame = level
	defer func() { s.frame = 0 }()
	for _, name := range assertOperands(text) {
		wp, typ, err := s.watchTarget(name, false)
		if err != nil {
			continue
		}
		val := ""
		if v, err := s.eval(name); err == nil {
			val = s.format(v, 0)
		}
		_ = typ
		f.Description += fmt.Sprintf(", %s = %s", name, val)
		return f, &whyCursor{reg: -1, addr: wp.Addr, size: wp.Len, what: name, tid: tid}, nil
	}
	f.verdict = "The asserted expression names no variable in memory to follow."
	return f, nil, nil
}

// operandRE matches the lvalues of an expression: a name and its members.
var operandRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*(?:\s*(?:->|\.)\s*[A-Za-z_][A-Za-z0-9_]*|\[[^\]]*\])*`)

// assertOperands lists the lvalues of an asserted expression, calls and
// keywords left out.
func assertOperands(expr string) []string {
	var out []string
	for _, loc := range operandRE.FindAllStringIndex(expr, -1) {
		name := expr[loc[0]:loc[1]]
		if rest := strings.TrimSpace(expr[loc[1]:]); strings.HasPrefix(rest, "(") {
			continue
		}
		switch name {
		case "sizeof", "NULL", "nullptr", "true", "false":
			continue
		}
		out = append(out, name)
	}
	return out
}

// readCString reads a NUL-terminated string of at most max bytes.
func (s *Session) readCString(addr uint64, max int) string {
	buf := make([]byte, max)
	n, _ := s.mem().ReadAt(buf, addr)
	buf = buf[:n]
	if i := strings.IndexByte(string(buf), 0); i >= 0 {
		buf = buf[:i]
	}
	return string(buf)
}
