package ptrace

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// shepherdArg is argv[1] of the rewind binary when it runs as a shepherd.
const shepherdArg = "__rewind_shepherd"

// The recorder's seccomp filter (seccomp.go) stays with a process for
// life, and with no tracer its SECCOMP_RET_TRACE verdict fails every
// call with ENOSYS. A process the recording leaves running (a daemon)
// therefore cannot be let go untraced: a shepherd, a small rewind process
// that outlives the recording, traces it and its descendants and resumes
// every seccomp stop, until they have all ended. The hand-over leaves no
// instant without a tracer: the recorder queues a SIGSTOP to each thread
// before detaching it, so that the threads stop in a group-stop before
// running anything; the shepherd seizes them there and lets them go on.
//
// What the daemon sees: a tracer (/proc's TracerPid is the shepherd's),
// a SIGCONT, and each system call that did not go through the hook page
// stopping for the shepherd (tens of microseconds). A stop signal sent to
// it later stops it (the shepherd listens, as a debugger would).

// shepherdOptions are the options of the shepherd's tracees: seccomp
// stops, and new threads and children, which inherit the filter.
const shepherdOptions = OptTraceSeccomp | OptTraceClone | OptTraceFork | OptTraceVfork | OptTraceExec | OptTraceSysGood

// StartShepherd starts a shepherd for the processes pids, whose threads
// have a SIGSTOP queued and are no longer traced. It returns once the
// shepherd has seized them all (it reads their threads from /proc), with
// the shepherd's pid.
func StartShepherd(pids []int) (int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("shepherd: %w", err)
	}
	args := []string{shepherdArg}
	for _, p := range pids {
		args = append(args, strconv.Itoa(p))
	}
	r, w, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("shepherd: %w", err)
	}
	defer r.Close()
	cmd := exec.Command(self, args...)
	cmd.Env = []string{"GODEBUG=asyncpreemptoff=1"}
	cmd.ExtraFiles = []*os.File{w}
	// Its own session: a terminal's hang-up or Ctrl-C must not end it
	// before the daemons it keeps running.
	cmd.SysProcAttr = &unix.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return 0, fmt.Errorf("shepherd: %w", err)
	}
	w.Close()
	go cmd.Wait() // reaped whenever it ends; rewind does not wait for it
	var b [64]byte
	n, _ := r.Read(b[:])
	if n == 0 || b[0] != 'S' {
		return 0, fmt.Errorf("shepherd: could not take over processes %v: %s", pids, b[:n])
	}
	return cmd.Process.Pid, nil
}

// runShepherd is the shepherd's main: it seizes every thread of pids,
// tells its starter (fd 3) how that went, then serves its tracees.
func runShepherd(args []string) {
	runtime.LockOSThread()
	ready := os.NewFile(3, "ready")
	live := map[int]bool{}
	var pids []int
	for _, a := range args {
		pid, err := strconv.Atoi(a)
		if err != nil {
			fmt.Fprintf(ready, "bad pid %q", a)
			os.Exit(2)
		}
		pids = append(pids, pid)
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			continue // it ended
		}
		for _, task := range tasks {
			tid, err := strconv.Atoi(task.Name())
			if err != nil {
				continue
			}
			seized, err := seizeUnlessEnding(tid)
			if err != nil {
				fmt.Fprintf(ready, "seize %d: %v", tid, err)
				os.Exit(1)
			}
			if seized {
				live[tid] = true
			}
		}
	}
	ready.Write([]byte{'S'})
	ready.Close()
	for _, pid := range pids {
		unix.Kill(pid, unix.SIGCONT)
	}
	handed := map[int]bool{}
	for len(live) > 0 {
		st, _, err := Wait(-1, false)
		if err != nil {
			os.Exit(0) // no tracee left
		}
		switch st.Kind {
		case Exited, Killed:
			delete(live, st.Tid)
			continue
		case StopGroup:
			live[st.Tid] = true
			if !handed[st.Tid] {
				// The SIGSTOP of the hand-over, or a new task's first stop.
				handed[st.Tid] = true
				err = Cont(st.Tid, 0)
			} else {
				err = Listen(st.Tid)
			}
		case StopSignal:
			err = Cont(st.Tid, st.Sig)
		default:
			// Seccomp stops, clone/fork/exec events, the interrupt-like
			// stop of a new task or of a SIGCONT after a listen.
			live[st.Tid] = true
			handed[st.Tid] = true
			err = Cont(st.Tid, 0)
		}
		if err != nil {
			delete(live, st.Tid) // it died meanwhile
		}
	}
}

// seizeUnlessEnding seizes thread tid for the shepherd, or reports false
// for a thread that is ending: the kernel refuses to trace a task on its
// way out (EPERM) before /proc shows it a zombie, as a child that wrote its
// last byte and called _exit as its parent ended does.
func seizeUnlessEnding(tid int) (bool, error) {
	var err error
	for try := 0; try < 20; try++ {
		if err = Seize(tid, shepherdOptions); err == nil {
			return true, nil
		}
		if st := TaskState(tid); st == 0 || st == 'Z' || st == 'X' {
			return false, nil // gone, or its death is all that is left
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false, err
}
