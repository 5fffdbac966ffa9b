package debugger

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/rewind-debugger/rewind/engine/timeline"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// fsBase is the index of fs_base in the registers: glibc's pthread_t,
// which gdb shows as "Thread 0x7ffff7d8a740".
var fsBase = func() int {
	for i, n := range trace.RegNames {
		if n == "fs_base" {
			return i
		}
	}
	return -1
}()

// threadTids are the debugged process's threads in creation order: gdb's
// thread numbers are their positions plus one, stable over the recording
// (a thread keeps its number after it exits, as in gdb).
func (s *Session) threadTids() []int32 {
	for _, p := range s.procs {
		if p.Pid == s.Process() {
			return p.Tids
		}
	}
	var out []int32
	for _, t := range s.tl.Session().Threads() {
		out = append(out, t.Tid)
	}
	return out
}

// threadNumber is gdb's number of a thread (0 when unknown).
func (s *Session) threadNumber(tid int32) int {
	for i, t := range s.threadTids() {
		if t == tid {
			return i + 1
		}
	}
	return 0
}

// targetID is gdb's "Thread 0x7ffff7d8a740 (LWP 1234)": the thread's
// pthread_t (its fs_base) and its recorded id; "LWP 1234" before the
// thread library set it up.
func (s *Session) targetID(tid int32) string {
	regs, err := s.tl.Session().Regs(tid)
	if err != nil || fsBase < 0 || regs[fsBase] == 0 {
		return fmt.Sprintf("LWP %d", tid)
	}
	return fmt.Sprintf("Thread %#x (LWP %d)", regs[fsBase], tid)
}

// ThreadName is the thread's name, read from the replaying thread (the
// same program, with the names the replay gave its threads).
func (s *Session) ThreadName(tid int32) string {
	for _, t := range s.tl.Session().Threads() {
		if t.Tid == tid && t.Real > 0 {
			data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/comm", t.Real, t.Real))
			if err == nil {
				return strings.TrimSpace(string(data))
			}
		}
	}
	return ""
}

// cmdThreadNumber implements thread [N] with gdb's numbers; N may also be
// a recorded thread id (rewind's own form, which the Threads pane uses).
func (s *Session) cmdThreadNumber(args string, res *Result) error {
	cur := s.currentThread()
	if args == "" {
		res.Value = ThreadSelected{ID: s.threadNumber(cur), Tid: cur}
		res.Text = fmt.Sprintf("[Current thread is %d (%s)]", s.threadNumber(cur), s.targetID(cur))
		return nil
	}
	n, err := strconv.Atoi(args)
	if err != nil || n < 1 {
		return fmt.Errorf("Invalid thread ID: %s", args)
	}
	tid := int32(0)
	if tids := s.threadTids(); n <= len(tids) {
		tid = tids[n-1]
	} else {
		tid = int32(n)
	}
	alive := false
	for _, t := range s.tl.Session().Threads() {
		alive = alive || t.Tid == tid
	}
	if !alive {
		if s.threadNumber(tid) > 0 {
			return fmt.Errorf("Thread ID %d has terminated (or does not exist yet) at this point of the recording.", n)
		}
		return fmt.Errorf("Unknown thread %d.", n)
	}
	s.thread, s.frame, s.listLine = tid, 0, 0
	s.habits.lastThread = tid
	var fr Result
	text := fmt.Sprintf("[Switching to thread %d (%s)]", s.threadNumber(tid), s.targetID(tid))
	if err := s.cmdFrame("frame", "", &fr); err == nil {
		text += "\n" + fr.Text
	}
	res.Value = ThreadSelected{ID: s.threadNumber(tid), Tid: tid}
	res.Text = text
	return nil
}

// infoThreads implements info threads as gdb: the small numbers, the
// target id with its name, the frame (the selected one of the current
// thread). The JSON keeps "id" as the recorded thread id (what thread
// and the stops' "thread" use) and adds "num", gdb's number.
func (s *Session) infoThreads(res *Result) error {
	cur := s.currentThread()
	type row struct {
		num      int
		tid      int32
		target   string
		frame    string
		function string
		pc       uint64
	}
	var rows []row
	width := len("Target Id")
	for _, t := range s.tl.Session().Threads() {
		regs, err := s.tl.Session().Regs(t.Tid)
		if err != nil {
			continue
		}
		r := row{num: s.threadNumber(t.Tid), tid: t.Tid, target: s.targetID(t.Tid), pc: regs[trace.RIP]}
		if name := s.ThreadName(t.Tid); name != "" {
			r.target += fmt.Sprintf(" %q", name)
		}
		r.function, _ = s.symbolize(r.pc)
		r.frame = s.threadFrame(t.Tid)
		width = max(width, len(r.target))
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return errors.New("No threads.")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  %-4s %-*s %s", "Id", width, "Target Id", "Frame ")
	var list []ThreadItem
	for _, r := range rows {
		mark := " "
		if r.tid == cur {
			mark = "*"
		}
		fmt.Fprintf(&b, "\n%s %-4d %-*s %s", mark, r.num, width, r.target, r.frame)
		list = append(list, ThreadItem{ID: r.tid, Num: r.num, Target: r.target, Current: r.tid == cur,
			PC: fmt.Sprintf("%#x", r.pc), Function: r.function, Frame: r.frame})
	}
	res.Text, res.Value = b.String(), list
	return nil
}

// threadFrame is the frame gdb's info threads shows for a thread: its
// innermost, without "#0  ".
func (s *Session) threadFrame(tid int32) string {
	frames, err := s.stack(tid)
	if err != nil || len(frames) == 0 {
		if pc, err := s.pcOf(tid); err == nil {
			return fmt.Sprintf("%#016x in ?? ()", pc)
		}
		return ""
	}
	line := s.frameLine(frames, 0, s.frameInfo(frames, 0))
	if i := strings.Index(line, "  "); i >= 0 && strings.HasPrefix(line, "#") {
		line = line[i+2:]
	}
	return line
}

// checkpoint is a moment named by rr's checkpoint command.
type checkpoint struct {
	id     int
	moment timeline.Moment
	where  string
}

// cmdCheckpoint implements checkpoint (rr's): the current moment gets a
// number that restart returns to exactly.
func (s *Session) cmdCheckpoint(res *Result) error {
	m := s.tl.Now()
	where := s.threadFrame(s.currentThread())
	s.habits.nextCheckpt++
	c := &checkpoint{id: s.habits.nextCheckpt, moment: m, where: where}
	s.habits.checkpoints = append(s.habits.checkpoints, c)
	s.moments[m.String()] = m
	res.Text = fmt.Sprintf("Checkpoint %d at %s", c.id, where)
	res.Value = CheckpointMade{ID: c.id, Moment: m.String(), Event: m.Event}
	return nil
}

// findCheckpoint is checkpoint number arg.
func (s *Session) findCheckpoint(arg string) (int, *checkpoint, error) {
	if strings.TrimSpace(arg) == "" {
		return 0, nil, errors.New("a checkpoint number is needed (info checkpoints lists them)")
	}
	id, err := strconv.Atoi(strings.TrimSpace(arg))
	if err != nil {
		return 0, nil, fmt.Errorf("bad checkpoint number %q", strings.TrimSpace(arg))
	}
	for i, c := range s.habits.checkpoints {
		if c.id == id {
			return i, c, nil
		}
	}
	return 0, nil, fmt.Errorf("No checkpoint number %d.", id)
}

// cmdRestart implements restart N: back (or forwards) to the checkpoint's
// moment, exactly, as goto does.
func (s *Session) cmdRestart(args string, res *Result) error {
	if strings.TrimSpace(args) == "" {
		return errors.New("restart needs a checkpoint number (info checkpoints lists them)")
	}
	_, c, err := s.findCheckpoint(args)
	if err != nil {
		return err
	}
	s.habits.killed = false
	return s.cmdGoto(c.moment.String(), res)
}

// cmdDeleteCheckpoint implements delete checkpoint N.
func (s *Session) cmdDeleteCheckpoint(args string, res *Result) error {
	i, c, err := s.findCheckpoint(args)
	if err != nil {
		return err
	}
	s.habits.checkpoints = append(s.habits.checkpoints[:i], s.habits.checkpoints[i+1:]...)
	res.Text = fmt.Sprintf("Deleted checkpoint %d.", c.id)
	return nil
}

// infoCheckpoints lists the checkpoints as rr: number, event, place.
func (s *Session) infoCheckpoints(res *Result) {
	if len(s.habits.checkpoints) == 0 {
		res.Text, res.Value = "No checkpoints.", []CheckpointItem{}
		return
	}
	var b strings.Builder
	b.WriteString("ID\tWhen\tWhere")
	var list []CheckpointItem
	for _, c := range s.habits.checkpoints {
		fmt.Fprintf(&b, "\n%d\t#%d\t%s", c.id, c.moment.Event, c.where)
		list = append(list, CheckpointItem{ID: c.id, Moment: c.moment.String(), Event: c.moment.Event, Where: c.where})
	}
	res.Text, res.Value = b.String(), list
}
