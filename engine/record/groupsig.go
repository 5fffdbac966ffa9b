package record

import (
	"os"
	"os/signal"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/syscalls"
)

// Signals to the process group. The program runs in rewind's process group,
// so that the terminal's job control treats them as one job (Ctrl-C reaches
// both, see onStopSignal). A program that signals its own group (kill(0,
// SIGABRT), abort handlers that re-raise to the group, make's children) thus
// signals rewind too. Those that end a Go program by default (the runtime
// dumps its goroutines and exits) would lose the recording, and the others
// that rewind reacts to (SIGINT, SIGTERM…) would stop it: the recorder
// notes the program's kill calls that can reach rewind, and ignores the
// signals they send it. The same signals from anyone else keep their
// effect: a SIGABRT sent to rewind still dumps its goroutines.

// groupFatal are the signals whose Go default ends rewind with a goroutine
// dump, caught while it records.
var groupFatal = []os.Signal{unix.SIGILL, unix.SIGTRAP, unix.SIGABRT, unix.SIGBUS, unix.SIGFPE,
	unix.SIGSEGV, unix.SIGSTKFLT, unix.SIGSYS}

// realtime are the real-time signals a Go program does not use, the first
// of which ends rewind by default: ignored while it records, whoever sends
// them (ptrace.IgnoreSignals: catching them through signal.Notify cost a
// round trip with the runtime's signal thread for each, 1–3 ms at each
// start and end of a recording).
func realtime() []unix.Signal {
	var out []unix.Signal
	for sig := unix.Signal(34); sig <= 64; sig++ {
		out = append(out, sig)
	}
	return out
}

// fromProgramWindow is how long after the program's kill a signal rewind
// receives is taken for the one it sent.
const fromProgramWindow = 2 * time.Second

// noteKill notes a kill the program is about to make that can reach rewind
// (its process group, every process, or rewind itself).
func (r *Recorder) noteKill(c *syscalls.Call) {
	if c.Nr != unix.SYS_KILL {
		return
	}
	pid, sig := int32(c.Args[0]), int(int32(c.Args[1]))
	if sig <= 0 || sig > 64 || (pid > 0 && int(pid) != os.Getpid()) {
		return
	}
	if r.programKills == nil {
		r.programKills = map[unix.Signal]time.Time{}
	}
	r.programKills[unix.Signal(sig)] = time.Now()
}

// fromProgram reports whether rewind's signal sig is the one the program
// sent (to its group) shortly before.
func (r *Recorder) fromProgram(sig unix.Signal) bool {
	at, ok := r.programKills[sig]
	return ok && time.Since(at) < fromProgramWindow
}

// otherSignal handles a signal rewind caught for the program's sake only,
// sent by someone else: one of groupFatal gets its default effect on
// rewind (a goroutine dump).
func otherSignal(sig unix.Signal) {
	if slices.Contains(groupFatal, os.Signal(sig)) {
		signal.Reset(sig)
		unix.Kill(os.Getpid(), sig)
	}
}
