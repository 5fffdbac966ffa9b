package debugger

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/timeline"
	"github.com/rewind-debugger/rewind/engine/trace"
	"golang.org/x/sys/unix"
)

// chooseProcess returns the process a session debugs: want (a recorded
// pid), or by default the one that crashed, else the last that exec'd the
// recorded program, else the first (trace.DefaultProcess).
func chooseProcess(path string, want int32) (int32, []*trace.Process, error) {
	procs, _ := trace.ReadProcesses(path)
	if len(procs) == 0 {
		return 0, nil, nil // the timeline says what is wrong with the trace
	}
	if want != 0 {
		for _, p := range procs {
			if p.Pid == want {
				return want, procs, nil
			}
		}
		return 0, procs, fmt.Errorf("no process %d in the recording (rewind ps %s lists them)", want, path)
	}
	rd, err := trace.Open(path)
	if err != nil {
		return 0, nil, err
	}
	program := rd.Header().Program
	rd.Close()
	return trace.DefaultProcess(procs, program).Pid, procs, nil
}

// Process is the recorded pid of the process the session debugs.
func (s *Session) Process() int32 { return s.tl.Index().Process }

// Processes lists the processes of the recording.
func (s *Session) Processes() []*trace.Process { return s.procs }

// SwitchProcess makes the session debug another process of the recording,
// at the start of its life. Breakpoints are kept and resolved again in it;
// watchpoints, which name its memory, are deleted.
func (s *Session) SwitchProcess(pid int32) error {
	found := false
	for _, p := range s.procs {
		found = found || p.Pid == pid
	}
	if !found {
		return fmt.Errorf("no process %d in the recording (info processes lists them)", pid)
	}
	tl, err := timeline.Open(s.path, s.budget, pid)
	if err != nil {
		return err
	}
	s.tl.Close()
	s.tl = tl
	tl.SetResolver(s.breakpointsOf)
	for _, b := range s.bps {
		b.addrs, b.byGen = nil, nil
	}
	s.watches, s.armed = nil, nil
	s.thread, s.frame = 0, 0
	s.habits.lastThread = 0 // the switch says so: no "[Switching to LWP]" after it
	s.syms, s.symsAt, s.symsLive = nil, 0, nil
	s.lastStop = nil
	s.densityCache = nil
	return nil
}

// cmdProcess is `process [PID]` (and gdb's `inferior`): without an argument
// it says which process is debugged; with one it switches to it.
func (s *Session) cmdProcess(args string, res *Result) error {
	args = strings.TrimSpace(args)
	if args == "" {
		pid := s.Process()
		res.Value = pid
		res.Text = fmt.Sprintf("[Current process is %d (%s)]", pid, s.processName(pid))
		return nil
	}
	n, err := strconv.Atoi(args)
	if err != nil {
		return fmt.Errorf("process: %q is not a pid (info processes lists them)", args)
	}
	if err := s.SwitchProcess(int32(n)); err != nil {
		return err
	}
	res.Value = int32(n)
	res.Text = fmt.Sprintf("[Switching to process %d (%s)] at %v", n, s.processName(int32(n)), s.tl.Now())
	return nil
}

// processAt is the recorded pid of the process event n belongs to (0 when
// unknown): the process of the event's thread whose life holds n (pids
// may be used again).
func (s *Session) processAt(n int64) int32 {
	tid := s.tl.Index().TidAt(n)
	for _, p := range s.procs {
		if n < p.Born || n > p.Last {
			continue
		}
		for _, t := range p.Tids {
			if t == tid {
				return p.Pid
			}
		}
	}
	return 0
}

// processName is a process's command line for messages.
func (s *Session) processName(pid int32) string {
	for _, p := range s.procs {
		if p.Pid == pid {
			return strings.Join(p.Args, " ")
		}
	}
	return "?"
}

// ProcessInfo is one process of the recording, for the Processes pane.
type ProcessInfo struct {
	Pid, Parent int32
	Args        []string
	// Exit is its exit code or signal ("-" while it lives at the end).
	Exit string
	// Code is its end as a shell's status (the exit code, 128+N for
	// signal N), 0 while it lives at the end.
	Code int
	// First and Last are its first and last events.
	First, Last int64
	Tids        []int32
}

// ProcessInfos lists the processes of the recording in order of birth.
func (s *Session) ProcessInfos() []ProcessInfo {
	out := make([]ProcessInfo, 0, len(s.procs))
	for _, p := range s.procs {
		info := ProcessInfo{Pid: p.Pid, Parent: p.Parent, Args: p.Args, Exit: exitText(p),
			First: p.Born, Last: p.Last, Tids: p.Tids}
		if ws := unix.WaitStatus(p.Status); p.Exited && ws.Signaled() {
			info.Code = 128 + int(ws.Signal())
		} else if p.Exited {
			info.Code = ws.ExitStatus()
		}
		out = append(out, info)
	}
	return out
}

// exitText is how a process ended, in a column as rewind ps says it: its
// exit code, the signal that killed it, or "-".
func exitText(p *trace.Process) string {
	if !p.Exited {
		return "-"
	}
	return ExitWord(p.Status)
}

// ExitWord is a wait status in one word, as `rewind ps` shows it: the exit
// code, or the name of the signal that killed the process.
func ExitWord(status int32) string {
	ws := uint32(status)
	if ws&0x7f == 0 {
		return strconv.Itoa(int(ws>>8) & 0xff)
	}
	return syscalls.SignalName(int(ws & 0x7f))
}

// FunctionAt names the function (or ELF symbol) at pc in the current
// moment's address space, "" when none: what the Timeline says an event
// happened in.
func (s *Session) FunctionAt(pc uint64) string {
	name, _ := s.symbolize(pc)
	return name
}

// infoProcesses lists the processes, the debugged one marked, as
// `rewind ps` does.
func (s *Session) infoProcesses(res *Result) {
	var list []ProcessItem
	var b strings.Builder
	b.WriteString("  PID     PPID    EXIT      EVENTS           CMD\n")
	cur := s.Process()
	for _, p := range s.procs {
		exit := "-"
		if p.Exited {
			exit = DescribeStatus(p.Status)
			if uint32(p.Status)&0x7f == 0 {
				exit = ExitWord(p.Status)
			}
		}
		item := ProcessItem{Pid: p.Pid, PPid: p.Parent, Current: p.Pid == cur, Exit: exit,
			FirstEvent: p.Born, LastEvent: p.Last, Args: p.Args}
		list = append(list, item)
		mark := " "
		if p.Pid == cur {
			mark = "*"
		}
		fmt.Fprintf(&b, "%s %-7d %-7d %-9s #%d-#%d\t%s\n", mark, p.Pid, p.Parent, exit, p.Born, p.Last, strings.Join(p.Args, " "))
	}
	res.Value, res.Text = list, strings.TrimRight(b.String(), "\n")
}
