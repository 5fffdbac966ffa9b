package debugger

import (
	"errors"
	"io"
	"regexp"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/timeline"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// failureEvents is what the recording says of the debugged process's end.
type failureEvents struct {
	fault      int64 // the last synchronous fault (SIGSEGV, SIGBUS, SIGFPE, SIGILL), -1 if none
	faultTid   int32
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
	// Newest first, until the text kept is there: each write read from
	// the replay is a motion to it, and at most maxReplayedWrites are.
	var parts [][]byte
	size, replayed := 0, 0
	for i := len(ws) - 1; i >= 0 && size < maxOutText; i-- {
		w := ws[i]
		data := w.data
		if uint64(len(data)) < w.n && replayed < maxReplayedWrites {
			replayed++
			if err := s.tl.Goto(timeline.Moment{Event: w.event + 1, Tid: w.tid}); err == nil {
				buf := make([]byte, min(w.n, 4096))
				if n, _ := s.mem().ReadAt(buf, w.addr); n > 0 {
					data = buf[:n]
				}
			}
		}
		parts = append(parts, data)
		size += len(data)
	}
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		b.Write(parts[i])
	}
	return lastBytes(b.String(), maxOutText)
}

// maxOutText is how much of the end of a stream why reads; of its writes,
// at most maxReplayedWrites (that blocked, their events keeping only their
// first bytes) are read from the replay.
const (
	maxOutText        = 16 << 10
	maxReplayedWrites = 32
)

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
