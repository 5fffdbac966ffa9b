package gdbserver

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/rewind-debugger/rewind/engine/replay"
	"github.com/rewind-debugger/rewind/engine/timeline"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// watchpoint is one of gdb's watchpoints: Z2 (write), Z3 (read), Z4
// (access), over a range the engine covers with aligned debug registers.
type watchpoint struct {
	kind byte // '2', '3' or '4'
	addr uint64
	len  uint64
}

// breakpoint answers Z and z: TYPE,ADDR,KIND.
func (sv *Server) breakpoint(insert bool, p string) string {
	fields := strings.Split(p, ",")
	if len(fields) < 3 || len(fields[0]) != 1 {
		return "E01"
	}
	addr, err1 := strconv.ParseUint(fields[1], 16, 64)
	kind, err2 := strconv.ParseUint(strings.SplitN(fields[2], ";", 2)[0], 16, 64)
	if err1 != nil || err2 != nil {
		return "E01"
	}
	switch t := fields[0][0]; t {
	case '0', '1':
		// A software and a hardware breakpoint may share an address:
		// removing one leaves the other.
		bit := uint8(1)
		if t == '1' {
			bit = 2
		}
		was := sv.hw[addr]
		now := was &^ bit
		if insert {
			now = was | bit
		}
		i := slices.Index(sv.bps, addr)
		switch {
		case now != 0 && i < 0:
			sv.bps = append(sv.bps, addr)
		case now == 0 && i >= 0:
			sv.bps = slices.Delete(sv.bps, i, i+1)
		}
		if now == 0 {
			delete(sv.hw, addr)
		} else {
			sv.hw[addr] = now
		}
		return "OK"
	case '2', '3', '4':
		w := watchpoint{kind: t, addr: addr, len: kind}
		i := slices.Index(sv.watches, w)
		if !insert {
			if i >= 0 {
				sv.watches = slices.Delete(sv.watches, i, i+1)
			}
			return "OK"
		}
		if i >= 0 {
			return "OK"
		}
		if kind == 0 || kind > 32 || len(engineWatches(append(slices.Clone(sv.watches), w))) > replay.MaxWatchpoints {
			// gdb then says it could not insert the watchpoint.
			return "E01"
		}
		sv.watches = append(sv.watches, w)
		return "OK"
	}
	return "" // unsupported type
}

// engineWatches splits gdb's watchpoints into the aligned 1, 2, 4 and 8
// byte ranges of the x86 debug registers. Reads cannot be watched alone
// there: Z3 traps every access, as on hardware.
func engineWatches(ws []watchpoint) []replay.Watchpoint {
	var out []replay.Watchpoint
	for _, w := range ws {
		for a, end := w.addr, w.addr+w.len; a < end; {
			size := uint64(8)
			for a%size != 0 || a+size > end {
				size /= 2
			}
			out = append(out, replay.Watchpoint{Addr: a, Len: int(size), ReadWrite: w.kind != '2'})
			a += size
		}
	}
	return out
}

// resume runs the replay (forwards or backwards, one instruction of thread
// tid (0: the one running) or until a stop) and returns the stop reply.
func (sv *Server) resume(reverse, step bool, tid int32) string {
	var st *timeline.Stop
	var err error
	tl := sv.s.Timeline()
	switch {
	case step && !reverse:
		st, err = tl.StepThreadInstruction(tid)
	case step:
		st, err = tl.ReverseStepThreadInstruction(tid)
	default:
		if err = sv.s.SetAddressStops(sv.bps, engineWatches(sv.watches)); err == nil {
			st, err = sv.s.ContinueAddressStops(reverse)
		}
		if err == nil && reverse && st.Reason == timeline.ReasonWatchpoint {
			// Going backwards, gdb expects to stand before the access,
			// where the old value still is (rr does the same): the trap
			// came after it.
			w, _ := sv.s.StopWatchpoint(st)
			if _, err = tl.ReverseStepInstruction(); err == nil {
				return sv.remember(sv.watchReply(st.Moment.Tid, w))
			}
		}
	}
	tid = sv.currentThread()
	switch {
	case errors.Is(err, timeline.ErrCancelled):
		return sv.remember(sv.stopReply(int(syscall.SIGINT), tid, ""))
	case errors.Is(err, timeline.ErrAtStart):
		return sv.remember(sv.stopReply(5, tid, "replaylog:begin;"))
	case errors.Is(err, timeline.ErrAtEnd):
		return sv.remember(sv.endReply(tid))
	case err != nil:
		// The replay could not go on (a divergence, a damaged trace):
		// gdb prints the console message and stands where it stopped.
		sv.logf("%v", err)
		sv.console(fmt.Sprintf("rewind: %v\n", err))
		return sv.remember(sv.stopReply(5, tid, ""))
	}
	return sv.remember(sv.replyFor(st, tid))
}

// remember keeps a stop reply for '?'.
func (sv *Server) remember(r string) string {
	if r[0] == 'T' || r[0] == 'S' {
		sv.last = r
	}
	return r
}

// replyFor turns a timeline stop into a stop reply.
func (sv *Server) replyFor(st *timeline.Stop, tid int32) string {
	if st.Moment.Tid != 0 && sv.threadAlive(st.Moment.Tid) {
		tid = st.Moment.Tid
	}
	switch st.Reason {
	case timeline.ReasonBreakpoint:
		pc, err := sv.s.Timeline().Session().Regs(tid)
		if err == nil && sv.hw[pc[trace.RIP]] == 2 {
			return sv.stopReply(5, tid, "hwbreak:;")
		}
		return sv.stopReply(5, tid, "swbreak:;")
	case timeline.ReasonWatchpoint:
		w, _ := sv.s.StopWatchpoint(st)
		return sv.watchReply(tid, w)
	case timeline.ReasonSignal:
		return sv.stopReply(st.Signal, tid, "")
	case timeline.ReasonStart:
		return sv.stopReply(5, tid, "replaylog:begin;")
	case timeline.ReasonExit, timeline.ReasonEnd:
		return sv.endReply(tid)
	}
	return sv.stopReply(5, tid, "")
}

// watchReply names the watchpoint of gdb's that covers the trapped range.
func (sv *Server) watchReply(tid int32, w replay.Watchpoint) string {
	for _, gw := range sv.watches {
		if gw.addr < w.Addr+uint64(w.Len) && w.Addr < gw.addr+gw.len {
			name := map[byte]string{'2': "watch", '3': "rwatch", '4': "awatch"}[gw.kind]
			return sv.stopReply(5, tid, fmt.Sprintf("%s:%x;", name, max(w.Addr, gw.addr)))
		}
	}
	return sv.stopReply(5, tid, "")
}

// endReply reports the end of the recording as the end of the replay log,
// as gdb expects at the end of its reverse-execution history: a W or X
// (the program's exit) would end a `target remote` session there, and the
// user could no longer go back. How the program ended is said on gdb's
// console.
func (sv *Server) endReply(tid int32) string {
	pid := sv.s.Process()
	for _, p := range sv.s.Processes() {
		if p.Pid != pid || !p.Exited {
			continue
		}
		if ws := syscall.WaitStatus(p.Status); ws.Signaled() {
			sv.console(fmt.Sprintf("rewind: the recording ends here: the program was killed by %v\n", ws.Signal()))
		} else {
			sv.console(fmt.Sprintf("rewind: the recording ends here: the program exited with status %d\n", ws.ExitStatus()))
		}
	}
	return sv.stopReply(5, tid, "replaylog:end;")
}

// stopReply is T with gdb's number for signal sig, the thread, and the
// extra stop reasons.
func (sv *Server) stopReply(sig int, tid int32, extra string) string {
	return fmt.Sprintf("T%02xthread:%x;%s", gdbSignal(sig), tid, extra)
}

// console sends text for gdb to print (an O packet).
func (sv *Server) console(text string) {
	sv.send(fmt.Sprintf("O%x", text)) //nolint:errcheck // the stop reply that follows reports a broken connection
}

// linuxToGDB maps the Linux signals whose numbers differ from gdb's.
var linuxToGDB = map[syscall.Signal]int{
	syscall.SIGBUS: 10, syscall.SIGUSR1: 30, syscall.SIGUSR2: 31, syscall.SIGSTKFLT: 0,
	syscall.SIGCHLD: 20, syscall.SIGCONT: 19, syscall.SIGSTOP: 17, syscall.SIGTSTP: 18,
	syscall.SIGURG: 16, syscall.SIGIO: 23, syscall.SIGPWR: 32, syscall.SIGSYS: 12,
}

// gdbSignal is gdb's number (enum gdb_signal) for Linux signal sig.
func gdbSignal(sig int) int {
	if g, ok := linuxToGDB[syscall.Signal(sig)]; ok {
		return g
	}
	return sig
}
