package attach

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The guard. A recorder killed with SIGKILL cannot detach: the kernel
// releases the threads it traced and they run on, but with what the
// recorder changed in them — rdtsc that faults (a Go program's first
// runtime.cputicks kills it), a patched vDSO, no rseq area, one CPU. So a
// recorder of a running process starts a guard: rewind itself, in a
// session of its own, reading the Changes on a pipe. When the pipe ends
// without the recorder saying it released the processes, the recorder is
// dead: the guard seizes each process, puts the changes back and lets it
// go. Between the recorder's death and the guard's seize (milliseconds),
// a thread that runs rdtsc still faults.

// guardArg is the argument that makes rewind a guard.
const guardArg = "__rewind_guard"

// guardMsg is one message to the guard: the changes so far, or the
// release.
type guardMsg struct {
	Changes  *Changes `json:"changes,omitempty"`
	Released bool     `json:"released,omitempty"`
}

// Guard is the guard of a recording, from the recorder's side.
type Guard struct {
	cmd *exec.Cmd
	w   *os.File
	enc *json.Encoder
}

// StartGuard starts the guard. Its messages about what it did go to
// stderr.
func StartGuard(stderr *os.File) (*Guard, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("start the guard: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start the guard: %w", err)
	}
	defer r.Close()
	cmd := exec.Command(self, guardArg)
	cmd.Stdin, cmd.Stderr = r, stderr
	// Away from the terminal's signals, which are for rewind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("start the guard: %w", err)
	}
	return &Guard{cmd: cmd, w: w, enc: json.NewEncoder(w)}, nil
}

// Update tells the guard what is changed now.
func (g *Guard) Update(c *Changes) error {
	if err := g.enc.Encode(guardMsg{Changes: c}); err != nil {
		return fmt.Errorf("guard: %w", err)
	}
	return nil
}

// Release tells the guard that the processes are let go, and waits for it
// to end.
func (g *Guard) Release() {
	g.enc.Encode(guardMsg{Released: true})
	g.w.Close()
	g.cmd.Wait()
}

// MaybeRunGuard turns the process into a guard when it was started as
// one, and never returns in that case. main must call it first.
func MaybeRunGuard() {
	if len(os.Args) != 2 || os.Args[1] != guardArg {
		return
	}
	if err := runGuard(os.Stdin); err != nil {
		fmt.Fprintf(os.Stderr, "rewind guard: %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// runGuard reads the recorder's messages until the pipe ends, then puts
// the last changes back unless the recorder released the processes.
func runGuard(in io.Reader) error {
	dec := json.NewDecoder(in)
	var last *Changes
	for {
		var m guardMsg
		if err := dec.Decode(&m); err != nil {
			break
		}
		if m.Released {
			return nil
		}
		if m.Changes != nil {
			last = m.Changes
		}
	}
	if last == nil {
		return nil
	}
	return Restore(last)
}

// untracedWait bounds how long Restore waits for the kernel to release a
// process from its dead tracer.
const untracedWait = 2 * time.Second

// Restore puts the changes back in each of their processes still alive,
// seizing and releasing it: what the guard does.
func Restore(c *Changes) error {
	var pids []int
	for pid := range c.Code {
		pids = append(pids, pid)
	}
	sort.Ints(pids)
	var errs []error
	for _, pid := range pids {
		if err := restoreProcess(pid, c); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(os.Stderr, "rewind guard: the recorder died; process %d is restored and runs on\n", pid)
	}
	return errors.Join(errs...)
}

// restoreProcess restores one process, once its dead tracer let it go.
func restoreProcess(pid int, c *Changes) error {
	if start, ok := c.Starts[pid]; ok && StartTime(pid) != start {
		return nil // it ended, and its pid went to another process
	}
	for end := time.Now().Add(untracedWait); ; time.Sleep(time.Millisecond) {
		st, err := readStatus(pid)
		if err != nil {
			return nil // gone: nothing to restore
		}
		if st.TracerPid == 0 {
			break
		}
		if time.Now().After(end) {
			return fmt.Errorf("process %d is still traced by %d", pid, st.TracerPid)
		}
	}
	p, err := Seize(pid)
	if err != nil {
		if strings.Contains(err.Error(), "no process") {
			return nil
		}
		return err
	}
	var errs []error
	p.do(func() {
		errs = append(errs, c.UndoCode(pid, p.tids, p.mem, p.held))
		for _, tid := range p.tids {
			errs = append(errs, c.UndoThread(tid, p.mem))
		}
	})
	errs = append(errs, p.Detach())
	return errors.Join(errs...)
}

// StartTime returns when process pid started, in clock ticks since boot
// (field 22 of /proc/PID/stat), or 0 when it is gone.
func StartTime(pid int) uint64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 20 {
		return 0
	}
	n, _ := strconv.ParseUint(f[19], 10, 64) // fields count from 3 after the name
	return n
}
