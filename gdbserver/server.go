package gdbserver

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rewind-debugger/rewind/debugger"
)

// Server serves one debugger session to one gdb connection at a time.
// All engine calls happen on the goroutine that runs Serve: a second
// goroutine only reads the connection, acknowledges packets and notes
// interrupts, which the session's progress hook turns into a cancel.
type Server struct {
	s *debugger.Session
	// Log receives one line per problem the server meets (a bad packet,
	// an engine error); nil discards. gdb shows stderr of `target remote |`.
	Log io.Writer

	wmu   sync.Mutex
	w     io.Writer
	noAck atomic.Bool

	interrupted atomic.Bool
	// gThread is the thread H g selected for register reads (0: the
	// current one).
	gThread int32
	// cThread is the thread H c selected for steps (0: the one running).
	cThread int32
	// bps are gdb's breakpoints by address (Z0/Z1), in insertion order;
	// hw says which kinds are at each (bit 1: Z0, bit 2: Z1); watches are
	// its watchpoints (Z2-Z4).
	bps     []uint64
	hw      map[uint64]uint8
	watches []watchpoint
	avx     bool
	// xferKey and xferData are the qXfer object read last ("threads:"),
	// whose next parts gdb asks for by offset.
	xferKey  string
	xferData []byte
	// last is the stop reply of the last stop, for '?'.
	last string
	// open are the files gdb opened with vFile (files.go).
	open openFiles
	// done is set when gdb detached or killed: Serve returns.
	done bool
}

// New makes a server for a session positioned where gdb should find it.
func New(s *debugger.Session) *Server {
	sv := &Server{s: s, hw: map[uint64]uint8{}}
	sv.avx = sv.hasAVX()
	s.SetProgress(func(done, total int64) bool { return !sv.interrupted.Load() })
	return sv
}

// Serve speaks the protocol on rw until gdb detaches, kills the target or
// closes the connection. Malformed packets are answered (NAK, or an error
// reply) and the server goes on.
func (sv *Server) Serve(rw io.ReadWriter) error {
	sv.w = rw
	sv.done = false
	frames := make(chan frame, 16)
	readErr := make(chan error, 1)
	go func() {
		rd := newReader(rw)
		for {
			f, err := rd.next()
			if err != nil {
				readErr <- err
				close(frames)
				return
			}
			switch {
			case f.interrupt:
				sv.interrupted.Store(true)
				continue
			case f.err != nil:
				sv.logf("dropped a packet: %v", f.err)
				sv.ack('-')
				continue
			}
			sv.ack('+')
			if resumes(f.data) {
				// An interrupt before this resume (crossing the last stop
				// reply, or sent while idle) is not for it: the reader sees
				// both in the order gdb sent them.
				sv.interrupted.Store(false)
			}
			frames <- f
		}
	}()
	for f := range frames {
		reply, send := sv.handle(f.data)
		if send {
			if err := sv.send(reply); err != nil {
				return fmt.Errorf("writing to gdb: %w", err)
			}
		}
		if sv.done {
			return nil
		}
	}
	if err := <-readErr; !errors.Is(err, io.EOF) {
		return fmt.Errorf("reading from gdb: %w", err)
	}
	return nil
}

// ack acknowledges a packet unless gdb turned acknowledgements off.
func (sv *Server) ack(c byte) {
	if sv.noAck.Load() {
		return
	}
	sv.wmu.Lock()
	defer sv.wmu.Unlock()
	sv.w.Write([]byte{c}) //nolint:errcheck // a broken connection shows at the next reply
}

// send writes one reply packet.
func (sv *Server) send(payload string) error {
	sv.wmu.Lock()
	defer sv.wmu.Unlock()
	_, err := sv.w.Write(encodePacket(payload))
	return err
}

func (sv *Server) logf(format string, args ...any) {
	if sv.Log != nil {
		fmt.Fprintf(sv.Log, "rewind: gdbserver: "+format+"\n", args...)
	}
}

// handle answers one packet; send is false for the packets gdb expects no
// reply to (k).
func (sv *Server) handle(p string) (reply string, send bool) {
	if p == "" {
		return "", true
	}
	switch p[0] {
	case '?':
		if sv.last == "" {
			sv.last = sv.stopReply(5, sv.currentThread(), "")
		}
		return sv.last, true
	case 'q':
		return sv.query(p[1:]), true
	case 'Q':
		if p == "QStartNoAckMode" {
			sv.noAck.Store(true)
			return "OK", true
		}
		return "", true
	case 'g':
		return sv.readAllRegisters(), true
	case 'p':
		return sv.readRegister(p[1:]), true
	case 'G', 'P':
		return "E01", true // a recording cannot change
	case 'm':
		return sv.readMemory(p[1:]), true
	case 'M', 'X':
		return "E01", true
	case 'H':
		return sv.setThread(p[1:]), true
	case 'T':
		if tid, ok := parseThread(p[1:]); ok && sv.threadAlive(tid) {
			return "OK", true
		}
		return "E01", true
	case 'Z', 'z':
		return sv.breakpoint(p[0] == 'Z', p[1:]), true
	case 'c', 'C':
		return sv.resume(false, false, 0), true
	case 's', 'S':
		return sv.resume(false, true, sv.cThread), true
	case 'b':
		switch p {
		case "bc":
			return sv.resume(true, false, 0), true
		case "bs":
			return sv.resume(true, true, sv.cThread), true
		}
		return "", true
	case 'v':
		return sv.vPacket(p[1:])
	case 'D':
		sv.done = true
		return "OK", true
	case 'k':
		sv.done = true
		return "", false
	}
	return "", true
}

// resumes says whether packet p resumes the replay (c, s, bc, bs, vCont;…).
func resumes(s string) bool {
	return s != "" && (s[0] == 'c' || s[0] == 'C' || s[0] == 's' || s[0] == 'S' || s == "bc" || s == "bs" || strings.HasPrefix(s, "vCont;"))
}

// vPacket answers the v packets: vCont, vKill, vFile (files.go),
// vMustReplyEmpty; anything else (vRun…) is unsupported, which gdb takes as
// an empty reply.
func (sv *Server) vPacket(p string) (string, bool) {
	switch {
	case strings.HasPrefix(p, "File:"):
		return sv.vFile(p[len("File:"):]), true
	case p == "Cont?":
		return "vCont;c;C;s;S", true
	case strings.HasPrefix(p, "Cont;"):
		// The replay runs its threads in the recorded order: the first
		// action says whether to step (the thread it names, once that
		// thread runs again) or continue; a signal to deliver is ignored
		// (the recording has them).
		act := strings.SplitN(p[len("Cont;"):], ";", 2)[0]
		var tid int32
		if _, th, ok := strings.Cut(act, ":"); ok {
			tid, _ = parseThread(th)
		}
		switch {
		case strings.HasPrefix(act, "s"), strings.HasPrefix(act, "S"):
			return sv.resume(false, true, tid), true
		case strings.HasPrefix(act, "c"), strings.HasPrefix(act, "C"):
			return sv.resume(false, false, 0), true
		}
		return "E01", true
	case strings.HasPrefix(p, "Kill"):
		sv.done = true
		return "OK", true
	}
	return "", true
}

// setThread is H: the thread of later register reads (g) or resumes (c).
func (sv *Server) setThread(p string) string {
	if len(p) < 2 {
		return "E01"
	}
	tid, ok := parseThread(p[1:])
	if !ok {
		return "E01"
	}
	if tid > 0 && !sv.threadAlive(tid) {
		return "E01"
	}
	switch p[0] {
	case 'g':
		sv.gThread = max(tid, 0)
	case 'c':
		sv.cThread = max(tid, 0)
	}
	return "OK"
}

// parseThread reads a thread id: hex, 0 (any), -1 (all), or the
// multiprocess form p<pid>.<tid>.
func parseThread(s string) (int32, bool) {
	if s == "-1" {
		return -1, true
	}
	if rest, ok := strings.CutPrefix(s, "p"); ok {
		_, tid, found := strings.Cut(rest, ".")
		if !found {
			return 0, false
		}
		s = tid
		if s == "-1" {
			return -1, true
		}
	}
	v, err := strconv.ParseUint(s, 16, 31)
	if err != nil {
		return 0, false
	}
	return int32(v), true
}

// parseAddrLen reads "ADDR,LEN" in hex.
func parseAddrLen(s string) (uint64, uint64, bool) {
	a, l, ok := strings.Cut(s, ",")
	if !ok {
		return 0, 0, false
	}
	addr, err1 := strconv.ParseUint(a, 16, 64)
	n, err2 := strconv.ParseUint(l, 16, 64)
	return addr, n, err1 == nil && err2 == nil
}
