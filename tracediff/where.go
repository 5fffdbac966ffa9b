package tracediff

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/rewind-debugger/rewind/debugger"
)

// errTimeout says a replay to a divergence took longer than allowed.
var errTimeout = errors.New("the replay took too long")

// placeSide fills in the stack and source line of a side by replaying its
// recording to the event. A failure is said in StackError: the rest of
// the report stands without it.
func placeSide(path string, s *Side, timeout time.Duration) {
	if s == nil || s.Event < 0 {
		if s != nil {
			s.StackError = "no event of the thread there"
		}
		return
	}
	frames, err := stackAt(path, s.Pid, s.Thread, s.Moment, timeout)
	if err != nil {
		s.StackError = err.Error()
		return
	}
	s.Stack = frames
	if f, ok := ownLine(frames); ok {
		s.Function, s.File, s.Line = f.Function, f.File, f.Line
	}
}

// ownLine picks the frame a user reads first: the innermost whose source
// is on this machine (the program's own code, not the C library's, whose
// sources are rarely installed), else the innermost with a line.
func ownLine(frames []Frame) (Frame, bool) {
	for _, f := range frames {
		if f.Line > 0 && filepath.IsAbs(f.full) {
			if _, err := os.Stat(f.full); err == nil {
				return f, true
			}
		}
	}
	for _, f := range frames {
		if f.Line > 0 {
			return f, true
		}
	}
	return Frame{}, false
}

// stackAt replays a recording to a moment of a side (where its thread
// stands once its system call returned, or its signal or trap was taken:
// the thread's next event, so that the session stays on its process) and
// returns the thread's stack there.
func stackAt(path string, pid, tid int32, moment string, timeout time.Duration) (frames []Frame, err error) {
	defer func() {
		if p := recover(); p != nil {
			frames, err = nil, fmt.Errorf("the debugger failed at %s: %v", moment, p)
		}
	}()
	sess, err := debugger.Open(path, debugger.Options{Process: pid, NoCheckpoints: true})
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	defer sess.Close()
	deadline := time.Now().Add(timeout)
	sess.SetProgress(func(done, total int64) bool { return time.Now().Before(deadline) })
	if res := sess.Execute("goto " + moment); !res.OK {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("going to %s: %w", moment, errTimeout)
		}
		return nil, fmt.Errorf("going to %s: %s", moment, res.Error)
	}
	bt := sess.ExecuteIn(tid, 0, "bt 32")
	infos, _ := bt.Value.([]debugger.FrameInfo)
	if !bt.OK || len(infos) == 0 {
		return nil, fmt.Errorf("no stack at %s: %s", moment, bt.Error)
	}
	for _, fi := range infos {
		frames = append(frames, Frame{PC: fi.PC, Function: fi.Function, File: fi.File, Line: fi.Line, full: fi.FullName})
	}
	if !hasLine(frames) {
		frames = append(frames, scanCallers(sess, tid)...)
	}
	return frames, nil
}

// hasLine says whether a frame of the stack has a source line.
func hasLine(frames []Frame) bool {
	for _, f := range frames {
		if f.Line > 0 {
			return true
		}
	}
	return false
}

// Bounds of scanCallers: the words of the stack it reads, the frames it
// gives.
const (
	scanWords  = 512
	scanFrames = 8
)

// scanCallers finds, where the unwinder stops at code it knows nothing of
// (the vDSO's clock functions), the return addresses on the stack that lie
// in functions with a source line, as gdb's heuristic unwinders do; the
// frames are marked Scanned.
func scanCallers(sess *debugger.Session, tid int32) []Frame {
	regs := sess.ExecuteIn(tid, 0, "info registers rsp")
	vals, _ := regs.Value.(map[string]string)
	sp, err := strconv.ParseUint(vals["rsp"], 0, 64)
	if err != nil || sp == 0 {
		return nil
	}
	_, mem, err := sess.Memory(fmt.Sprintf("%#x", sp), scanWords*8)
	if err != nil {
		return nil
	}
	var out []Frame
	for i := 0; i+8 <= len(mem) && len(out) < scanFrames; i += 8 {
		w := binary.LittleEndian.Uint64(mem[i:])
		fn := sess.FunctionAt(w)
		if fn == "" || w == 0 {
			continue
		}
		// The call instruction is before the return address: its line
		// is the caller's.
		line := sess.ExecuteIn(tid, 0, fmt.Sprintf("info line *%#x", w-1))
		v, _ := line.Value.(debugger.LineRange)
		file, n := v.File, v.Line
		if !line.OK || file == "" || n == 0 {
			continue
		}
		out = append(out, Frame{PC: fmt.Sprintf("%#x", w), Function: fn, File: filepath.Base(file), Line: n, Scanned: true, full: file})
		if fn == "main" {
			break
		}
	}
	return out
}
