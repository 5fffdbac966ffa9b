package attach

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// seizeOptions distinguish system-call stops (the injected calls wait for
// them). No PTRACE_O_EXITKILL: a recorder that dies must leave the process
// running, and no PTRACE_O_TRACECLONE: new threads are found by reading
// /proc again, once all the known ones are stopped.
const seizeOptions = ptrace.OptTraceSysGood

// capSysPtrace is CAP_SYS_PTRACE's bit in a capability set.
const capSysPtrace = 19

// Process is a running process whose threads are all stopped under ptrace.
// Every ptrace request goes through its locked thread.
type Process struct {
	Pid  int
	th   *ptrace.Thread
	mem  *ptrace.Mem
	tids []int
	// held are the signals that stopped a thread before its interrupt did
	// (a signal-delivery-stop takes the signal out of the queue): they are
	// queued again, siginfo and all, before the detach.
	held map[int][][]byte
	// restarted: see Restarted.
	restarted map[int]int
}

// Seize stops every thread of process pid. It refuses a process another
// tracer holds, one of another user when rewind lacks CAP_SYS_PTRACE, and
// rewind itself, its ancestors and its descendants. The process's ptrace
// requests go through a locked thread of its own.
func Seize(pid int) (*Process, error) {
	th := ptrace.NewThread()
	p, err := ptrace.DoValue(th, func() (*Process, error) { return SeizeHere(pid) })
	if err != nil {
		th.Close()
		return nil, err
	}
	p.th = th
	return p, nil
}

// SeizeHere is Seize for a caller that is itself the ptrace thread (the
// recorder): every later request for the process must come from it too.
func SeizeHere(pid int) (*Process, error) {
	if err := checkTarget(pid); err != nil {
		return nil, err
	}
	// The memory first: a failure after the seize must queue the held
	// signals again, which writes to it (Detach).
	m, err := ptrace.OpenMem(pid)
	if err != nil {
		return nil, fmt.Errorf("attach to %d: %w", pid, err)
	}
	p := &Process{Pid: pid, held: map[int][][]byte{}, restarted: map[int]int{}, mem: m}
	if err = p.seizeAll(); err == nil {
		p.leaderFirst()
		err = p.restartCalls()
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("attach to %d: %w", pid, err), p.Detach())
	}
	return p, nil
}

// Adopt wraps threads tids of process pid that the caller already traces
// and has stopped where calls can be injected (the recorder's, for a new
// segment of its ring buffer), so as to snapshot them. It must not be
// detached.
func Adopt(pid int, tids []int, m *ptrace.Mem) *Process {
	p := &Process{Pid: pid, mem: m, tids: append([]int(nil), tids...), held: map[int][][]byte{}, restarted: map[int]int{}}
	p.leaderFirst()
	return p
}

// do runs f on the process's ptrace thread.
func (p *Process) do(f func()) {
	if p.th == nil {
		f()
		return
	}
	p.th.Do(f)
}

// Mem returns the process's memory.
func (p *Process) Mem() *ptrace.Mem { return p.mem }

// TakeHeld hands over the signals that stopped threads while they were
// being seized, by thread (siginfo each): the caller delivers them, and
// Detach no longer queues them again.
func (p *Process) TakeHeld() map[int][][]byte {
	h := p.held
	p.held = map[int][][]byte{}
	return h
}

// Hold adds signals taken out of the queue, by thread, to those queued
// again at the detach (or handed over by TakeHeld).
func (p *Process) Hold(held map[int][][]byte) {
	for tid, infos := range held {
		p.held[tid] = append(p.held[tid], infos...)
	}
}

// Restarted returns, for each thread the seize took out of a system call
// that the kernel resumes itself (nanosleep, poll… now set to make
// restart_syscall), the number of that call.
func (p *Process) Restarted() map[int]int { return p.restarted }

// Threads returns the thread ids of the process, in order.
func (p *Process) Threads() []int { return append([]int(nil), p.tids...) }

// seizeAll seizes and stops the threads until a reading of the list finds
// no new one: all known threads being stopped, none can be created.
func (p *Process) seizeAll() error {
	seen := map[int]bool{}
	for {
		tids, err := listThreads(p.Pid)
		if err != nil {
			return err
		}
		var fresh []int
		for _, tid := range tids {
			if !seen[tid] {
				fresh = append(fresh, tid)
			}
		}
		if len(fresh) == 0 {
			return nil
		}
		for _, tid := range fresh {
			if err := ptrace.Seize(tid, seizeOptions); err != nil {
				if errors.Is(err, unix.ESRCH) {
					continue // it exited in between
				}
				return err
			}
			seen[tid] = true
			p.tids = append(p.tids, tid)
			if err := ptrace.Interrupt(tid); err != nil {
				return err
			}
			if err := p.waitInterrupted(tid); err != nil {
				return err
			}
		}
		sort.Ints(p.tids)
	}
}

// The syscall instruction's length, and orig_rax when no call is in
// progress.
const (
	syscallInsnLength = 2
	noSyscall         = ^uint64(0)
)

// leaderFirst puts the thread group leader, when it lives, first: the
// snapshot's first thread is the process's main thread.
func (p *Process) leaderFirst() {
	for i, tid := range p.tids {
		if tid == p.Pid && i > 0 {
			copy(p.tids[1:i+1], p.tids[:i])
			p.tids[0] = tid
		}
	}
}

// restartCalls puts every thread that the stop took out of a blocking
// system call back before that call (BeforeRestart).
func (p *Process) restartCalls() error {
	for _, tid := range p.tids {
		nr, err := BeforeRestart(tid)
		if err != nil {
			return err
		}
		if nr > 0 {
			p.restarted[tid] = nr
		}
	}
	return nil
}

// BeforeRestart puts a thread that a stop took out of a blocking system
// call back before that call, as the kernel would when resuming it without
// a signal to handle: rip on the syscall instruction again, rax the call's
// number (restart_syscall for a call the kernel resumes itself, a
// nanosleep…). The registers then describe a thread about to make the
// call, which is what a snapshot and a recorder's first stop of the thread
// need, and what a detach leaves. It returns the interrupted call's number
// when the thread will make restart_syscall, 0 otherwise.
func BeforeRestart(tid int) (int, error) {
	var regs trace.Regs
	if err := ptrace.GetRegs(tid, &regs); err != nil {
		return 0, err
	}
	nr := regs[trace.OrigRAX]
	if nr == noSyscall {
		return 0, nil
	}
	r := ptrace.RestartCall(&regs, false)
	if !r.Restart {
		return 0, nil
	}
	regs[trace.OrigRAX] = noSyscall
	restart := 0
	if r.Block {
		restart = int(nr)
	}
	if err := ptrace.SetRegs(tid, &regs); err != nil {
		return 0, fmt.Errorf("thread %d: restart its system call %d: %w", tid, nr, err)
	}
	return restart, nil
}

// waitInterrupted waits until tid is in the stop PTRACE_INTERRUPT asked
// for. A signal that arrives first is held, to be queued again at detach.
func (p *Process) waitInterrupted(tid int) error {
	for {
		st, _, err := ptrace.Wait(tid, false)
		if err != nil {
			return err
		}
		switch st.Kind {
		case ptrace.StopEvent, ptrace.StopGroup:
			return nil
		case ptrace.StopSignal:
			info, err := ptrace.GetSiginfo(tid)
			if err != nil {
				return err
			}
			// A fault comes again when the instruction runs again:
			// holding it would deliver it twice.
			if ptrace.Sent(st.Sig, info) {
				p.held[tid] = append(p.held[tid], info)
			}
			// Resumed without the signal, the thread goes on to the
			// pending interrupt's stop.
			if err := ptrace.Cont(tid, 0); err != nil {
				return err
			}
		default:
			return fmt.Errorf("thread %d: %v while stopping it", tid, st)
		}
	}
}

// listThreads reads the thread ids of pid from /proc.
func listThreads(pid int) ([]int, error) {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil, fmt.Errorf("list the threads of %d: %w", pid, err)
	}
	var tids []int
	for _, e := range ents {
		// An exited thread (the main thread after pthread_exit) cannot
		// be seized and runs nothing.
		if tid, err := strconv.Atoi(e.Name()); err == nil && !ptrace.Zombie(tid) {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

// procStatus is what Seize checks in /proc/PID/status.
type procStatus struct {
	Name      string
	PPid      int
	TracerPid int
	Uids      [4]int // real, effective, saved, filesystem
	Gids      [4]int
	CapEff    uint64
}

// readStatus parses /proc/PID/status.
func readStatus(pid int) (procStatus, error) {
	var s procStatus
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return s, fmt.Errorf("no process %d", pid)
		}
		return s, fmt.Errorf("read the status of %d: %w", pid, err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Name":
			s.Name = v
		case "PPid":
			s.PPid, _ = strconv.Atoi(v)
		case "TracerPid":
			s.TracerPid, _ = strconv.Atoi(v)
		case "Uid", "Gid":
			ids := &s.Uids
			if k == "Gid" {
				ids = &s.Gids
			}
			for i, f := range strings.Fields(v) {
				if i < 4 {
					ids[i], _ = strconv.Atoi(f)
				}
			}
		case "CapEff":
			s.CapEff, _ = strconv.ParseUint(v, 16, 64)
		}
	}
	return s, nil
}

// checkTarget refuses what Seize must not attach to, with the reason.
func checkTarget(pid int) error {
	if pid <= 0 {
		return fmt.Errorf("attach: bad process id %d", pid)
	}
	target, err := readStatus(pid)
	if err != nil {
		return fmt.Errorf("attach: %w", err)
	}
	self, err := readStatus(os.Getpid())
	if err != nil {
		return fmt.Errorf("attach: %w", err)
	}
	if err := checkOwner(target, self); err != nil {
		return fmt.Errorf("attach to %d (%s): %w", pid, target.Name, err)
	}
	if target.TracerPid != 0 {
		return fmt.Errorf("attach to %d (%s): already traced by process %d (%s)", pid, target.Name, target.TracerPid, nameOf(target.TracerPid))
	}
	if err := checkTree(pid, os.Getpid(), parentOf); err != nil {
		return fmt.Errorf("attach to %d (%s): %w", pid, target.Name, err)
	}
	return nil
}

// checkOwner applies the kernel's ptrace access rule: every user and group
// id of the target must be the caller's, unless the caller has
// CAP_SYS_PTRACE.
func checkOwner(target, self procStatus) error {
	if self.CapEff&(1<<capSysPtrace) != 0 {
		return nil
	}
	fsuid, fsgid := self.Uids[3], self.Gids[3]
	for i := 0; i < 3; i++ {
		if target.Uids[i] != fsuid || target.Gids[i] != fsgid {
			return fmt.Errorf("it belongs to user %d and rewind runs as user %d without CAP_SYS_PTRACE", target.Uids[0], self.Uids[0])
		}
	}
	return nil
}

// checkTree refuses rewind itself, its ancestors (stopping one of them,
// the shell that waits for rewind, would hang both) and its descendants
// (their stops would also be reported to rewind's own waits as a parent).
func checkTree(pid, self int, parent func(int) int) error {
	if pid == self {
		return errors.New("it is rewind itself")
	}
	for p := parent(self); p > 0; p = parent(p) {
		if p == pid {
			return errors.New("it is an ancestor of rewind")
		}
	}
	for p := parent(pid); p > 0; p = parent(p) {
		if p == self {
			return errors.New("it is a descendant of rewind")
		}
	}
	return nil
}

// parentOf returns the parent of pid, or 0 when it is unknown or pid is 1.
func parentOf(pid int) int {
	if pid <= 1 {
		return 0
	}
	s, err := readStatus(pid)
	if err != nil || s.PPid == pid {
		return 0
	}
	return s.PPid
}

// nameOf returns the command name of pid, for messages.
func nameOf(pid int) string {
	s, err := readStatus(pid)
	if err != nil {
		return "?"
	}
	return s.Name
}

// BeforeCall turns the registers of a thread at a system call's entry or
// exit into those of the thread about to make call nr: rip on the syscall
// instruction, rax the number, and no call in progress.
func BeforeCall(regs *trace.Regs, nr uint64) {
	regs[trace.RAX] = nr
	regs[trace.RIP] -= syscallInsnLength
	regs[trace.OrigRAX] = noSyscall
}
