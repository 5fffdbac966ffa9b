package ptrace

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// ProcPath returns the /proc path of name (maps, smaps, exe, map_files/…)
// for process pid, read through a live thread of it. The main thread's own
// entries lose the address space once it has exited while other threads
// live (pthread_exit in main): its maps read empty and its exe link is gone,
// so a trampoline would be placed over mappings and data would not be
// found.
func ProcPath(pid int, name string) string {
	if !Zombie(pid) {
		return fmt.Sprintf("/proc/%d/%s", pid, name)
	}
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil && tid != pid && !Zombie(tid) {
			return fmt.Sprintf("/proc/%d/%s", tid, name)
		}
	}
	return fmt.Sprintf("/proc/%d/%s", pid, name)
}

// Zombie reports whether thread tid has exited (state Z or X in its stat).
func Zombie(tid int) bool {
	st := TaskState(tid)
	return st == 'Z' || st == 'X'
}

// TaskState is the state letter of thread tid in its /proc stat (R
// running, S sleeping, D uninterruptible, T stopped, t traced-stop, Z
// zombie...), or 0 when it cannot be read.
func TaskState(tid int) byte {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", tid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}

// OwnTid returns thread tid's id as the thread itself sees it: the last
// number of the NSpid line of its status, its id in the innermost pid
// namespace it belongs to (getpid, gettid, CLONE_CHILD_SETTID answer in
// that one). tid is the id in the caller's namespace; a thread in no other
// namespace gets tid back.
func OwnTid(tid int) (int, error) {
	if inOwnPidNamespace(tid) {
		// Most programs: one readlink, where the status (which the
		// kernel formats whole) cost ~20 µs a fork.
		return tid, nil
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return 0, fmt.Errorf("read the pid namespace ids of %d: %w", tid, err)
	}
	for line := range bytes.Lines(b) {
		rest, ok := bytes.CutPrefix(line, []byte("NSpid:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) == 0 {
			break
		}
		own, err := strconv.Atoi(string(f[len(f)-1]))
		if err != nil {
			return 0, fmt.Errorf("NSpid of %d: %w", tid, err)
		}
		return own, nil
	}
	// A kernel without NSpid (before 4.1) cannot tell: tid is all there is.
	return tid, nil
}

// ownPidNamespace is the link naming rewind's own pid namespace, or "".
var ownPidNamespace = sync.OnceValue(func() string {
	ns, _ := os.Readlink("/proc/self/ns/pid")
	return ns
})

// inOwnPidNamespace says whether thread tid is in rewind's pid namespace,
// where its ids are the ones rewind sees; false when unsure.
func inOwnPidNamespace(tid int) bool {
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", tid))
	return err == nil && ns != "" && ns == ownPidNamespace()
}

// ReadLayout reads the address space layout of process pid from its
// /proc stat (struct prctl_mm_map's fields). The program break is not
// there: Brk is StartBrk, as it is right after an exec; a caller that
// needs the break of a process that ran asks it with brk(0).
func ReadLayout(pid int) (trace.MMLayout, error) {
	l, _, err := ReadStat(pid)
	return l, err
}

// ReadStat is ReadLayout, with the command name the same file says
// (/proc/PID/comm's): one read of /proc at an exec for both.
func ReadStat(pid int) (trace.MMLayout, string, error) {
	var l trace.MMLayout
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return l, "", fmt.Errorf("read the address space layout: %w", err)
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from the last ')', which ends field 2.
	i := bytes.LastIndexByte(data, ')')
	open := bytes.IndexByte(data, '(')
	if i < 0 || open < 0 || open > i {
		return l, "", fmt.Errorf("read the address space layout: /proc/%d/stat: no command name", pid)
	}
	comm := string(data[open+1 : i])
	f := strings.Fields(string(data[i+1:]))
	field := func(n int) uint64 { // n counts from 1, as proc(5) does
		if n-3 >= len(f) {
			return 0
		}
		v, _ := strconv.ParseUint(f[n-3], 10, 64)
		return v
	}
	l = trace.MMLayout{StartCode: field(26), EndCode: field(27), StartStack: field(28),
		StartData: field(45), EndData: field(46), StartBrk: field(47),
		ArgStart: field(48), ArgEnd: field(49), EnvStart: field(50), EnvEnd: field(51)}
	if l.EnvEnd == 0 {
		return l, "", fmt.Errorf("read the address space layout: /proc/%d/stat hides it", pid)
	}
	l.Brk = l.StartBrk
	return l, comm, nil
}
