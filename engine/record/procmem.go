package record

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// A write through /proc/PID/mem or process_vm_writev changes a process's
// memory; replay emulates the call, so what it wrote is logged as the
// call's output (the caller's own memory) or, for another recorded
// process, in a KindSharedMem event of that process without an object.

// iovecSize is sizeof(struct iovec); uioMaxIov is UIO_MAXIOV, the most
// iovecs a call takes.
const (
	iovecSize = 16
	uioMaxIov = 1024
)

// procMemWrites logs the memory c wrote into a process through /proc/PID/mem
// or process_vm_writev: into e's outputs when the process is t's, else in
// an event of that process, logged after e (returned).
func (r *Recorder) procMemWrites(t *thread, c *syscalls.Call, e *trace.Event) *trace.Event {
	pid, ranges := r.memWriteRanges(t, c)
	if len(ranges) == 0 {
		return nil
	}
	p := r.procs[pid]
	if th := r.threads[pid]; p == nil && th != nil {
		p = th.proc // /proc/TID/mem of a thread
	}
	if p == nil {
		return nil // a process outside the recording: replay does not run it
	}
	if err := p.openMem(); err != nil {
		// A child not yet at its first stop has no memory file yet.
		r.markUnsupported(c, e, "it wrote into process memory rewind cannot read: "+err.Error())
		return nil
	}
	mem, err := readRanges(p.mem, ranges, nil)
	if err != nil {
		r.markUnsupported(c, e, "it wrote into process memory "+err.Error())
		return nil
	}
	if p == t.proc {
		e.Mem = append(e.Mem, mem...)
		return nil
	}
	for _, o := range r.threads {
		if o.proc == p && o.state != gone {
			return &trace.Event{Kind: trace.KindSharedMem, Tid: int32(o.tid), Mem: mem}
		}
	}
	return nil
}

// memWriteRanges returns the process c wrote the memory of, and where.
func (r *Recorder) memWriteRanges(t *thread, c *syscalls.Call) (int, []syscalls.Range) {
	if c.Ret <= 0 {
		return 0, nil
	}
	switch c.Nr {
	case unix.SYS_PROCESS_VM_WRITEV:
		return int(int32(c.Args[0])), r.remoteIovecs(t, c.Args[3], c.Args[4], c.Ret)
	case unix.SYS_WRITE, unix.SYS_WRITEV, unix.SYS_PWRITE64, unix.SYS_PWRITEV, unix.SYS_PWRITEV2:
	default:
		return 0, nil
	}
	fd := int(int32(c.Args[0]))
	target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", t.tid, fd))
	if err != nil {
		return 0, nil
	}
	pid, ok := procMemPid(target)
	if !ok {
		return 0, nil
	}
	var off uint64
	switch {
	case c.Nr == unix.SYS_PWRITE64 || c.Nr == unix.SYS_PWRITEV:
		off = c.Args[3]
	case c.Nr == unix.SYS_PWRITEV2 && int64(c.Args[3]) != -1:
		off = c.Args[3]
	default:
		// The file position moved past what was written.
		pos, err := fdPos(t.tid, fd)
		if err != nil {
			return 0, nil
		}
		off = uint64(pos) - uint64(c.Ret)
	}
	return pid, []syscalls.Range{{Addr: off, Len: int(c.Ret)}}
}

// remoteIovecs reads the iovecs process_vm_writev wrote through, n bytes in
// all, in order.
func (r *Recorder) remoteIovecs(t *thread, addr, count uint64, n int64) []syscalls.Range {
	if count > uioMaxIov {
		return nil
	}
	buf := make([]byte, count*iovecSize)
	if _, err := t.proc.mem.ReadAt(buf, addr); err != nil {
		return nil
	}
	var out []syscalls.Range
	for i := uint64(0); i < count && n > 0; i++ {
		base := binary.LittleEndian.Uint64(buf[i*iovecSize:])
		l := int64(binary.LittleEndian.Uint64(buf[i*iovecSize+8:]))
		l = min(l, n)
		out = append(out, syscalls.Range{Addr: base, Len: int(l)})
		n -= l
	}
	return out
}

// procMemPid parses /proc/PID/mem and /proc/PID/task/TID/mem.
func procMemPid(path string) (int, bool) {
	rest, ok := strings.CutPrefix(path, "/proc/")
	if !ok {
		return 0, false
	}
	num, rest, _ := strings.Cut(rest, "/")
	pid, err := strconv.Atoi(num)
	if err != nil {
		return 0, false
	}
	if rest == "mem" {
		return pid, true
	}
	if task, ok := strings.CutPrefix(rest, "task/"); ok {
		if _, mem, _ := strings.Cut(task, "/"); mem == "mem" {
			return pid, true
		}
	}
	return 0, false
}
