package debugger

import (
	"errors"
	"fmt"
	"io"

	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// recordedMemory serves the memory a call read and wrote, as recorded, so
// that a listing can decode paths and buffers without a process.
type recordedMemory []trace.Mem

func (m recordedMemory) ReadAt(p []byte, addr uint64) (int, error) {
	for _, r := range m {
		if addr >= r.Addr && addr+uint64(len(p)) <= r.Addr+uint64(len(r.Data)) {
			return copy(p, r.Data[addr-r.Addr:]), nil
		}
		if addr >= r.Addr && addr < r.Addr+uint64(len(r.Data)) {
			n := copy(p, r.Data[addr-r.Addr:])
			return n, io.ErrUnexpectedEOF
		}
	}
	return 0, errors.New("not recorded")
}

// DescribeEvent renders one event as a line of text.
func DescribeEvent(e, entry *trace.Event) string {
	switch e.Kind {
	case trace.KindSyscall, trace.KindSyscallExit:
		regs := e.Regs
		mem := append(recordedMemory(e.In), e.Mem...)
		if e.Kind == trace.KindSyscallExit && entry != nil {
			regs = entry.Regs
			mem = append(recordedMemory(entry.In), e.Mem...)
		}
		c := syscalls.EventCall(e.Syscall, &regs, e.Flags&trace.FlagI386 != 0)
		c.Ret = int64(e.ExitRegs[trace.RAX])
		s := syscalls.Format(&c, mem)
		if e.Flags&trace.FlagNoReturn != 0 {
			s = syscalls.FormatCall(&c, mem) + " = ?"
		}
		if e.Kind == trace.KindSyscallExit {
			s = "<... resumed> " + s
		}
		return s
	case trace.KindSyscallEntry:
		c := syscalls.EventCall(e.Syscall, &e.Regs, e.Flags&trace.FlagI386 != 0)
		return syscalls.FormatCall(&c, recordedMemory(e.In)) + " <blocking...>"
	case trace.KindSignal:
		kind := "async"
		if e.Flags&trace.FlagSyncSignal != 0 {
			kind = "sync"
		}
		switch {
		case e.Flags&trace.FlagSingleStep != 0:
			kind = "single step of its tracer"
		case e.Flags&trace.FlagPtraceStop != 0:
			kind += ", stop for its tracer"
		}
		return fmt.Sprintf("--- %s (%s) at rip %#x ---", syscalls.SignalName(int(e.Signo)), kind, e.Regs[trace.RIP])
	case trace.KindRdtsc:
		name := "rdtsc"
		if e.Flags&trace.FlagRdtscp != 0 {
			name = "rdtscp"
		}
		return fmt.Sprintf("%s at rip %#x = %#x", name, e.Regs[trace.RIP], e.Value)
	case trace.KindRdrand:
		if e.Aux&1 == 0 {
			return fmt.Sprintf("%s at rip %#x failed (CF=0)", e.TrapName(), e.Regs[trace.RIP])
		}
		return fmt.Sprintf("%s at rip %#x = %#x", e.TrapName(), e.Regs[trace.RIP], e.Value)
	case trace.KindCpuid:
		if e.Flags&trace.FlagXgetbv != 0 {
			return fmt.Sprintf("xgetbv(%#x) at rip %#x = %#x", uint32(e.Regs[trace.RCX]), e.Regs[trace.RIP], e.Value)
		}
		return fmt.Sprintf("cpuid(%#x, %#x) at rip %#x = %#x %#x %#x %#x", uint32(e.Regs[trace.RAX]), uint32(e.Regs[trace.RCX]),
			e.Regs[trace.RIP], uint32(e.Value), e.Value>>32, uint32(e.Aux), e.Aux>>32)
	case trace.KindPreempt:
		how := "spin"
		if e.Flags&trace.FlagApprox != 0 {
			how = "approximate"
		}
		return fmt.Sprintf("preempted at rip %#x (%s)", e.Regs[trace.RIP], how)
	case trace.KindExec:
		return fmt.Sprintf("exec (rip %#x, rsp %#x)", e.Regs[trace.RIP], e.Regs[trace.RSP])
	case trace.KindSnapshot:
		if snap, err := trace.DecodeSnapshot(e); err == nil && snap.Ring {
			return fmt.Sprintf("+++ snapshot of process %d where the ring buffer kept it from: %d threads, %d mappings +++", snap.Pid, len(snap.Threads), len(snap.Regions))
		} else if err == nil {
			return fmt.Sprintf("+++ attached to process %d: snapshot of %d threads, %d mappings +++", snap.Pid, len(snap.Threads), len(snap.Regions))
		}
		return "+++ attached: snapshot +++"
	case trace.KindThreadExit:
		return "+++ thread exited +++"
	case trace.KindExit:
		return "+++ " + DescribeStatus(e.Status) + " +++"
	case trace.KindEnd:
		return "+++ end of the recording: " + string(e.Data) + " +++"
	case trace.KindSharedMem:
		if e.Shared == nil {
			return fmt.Sprintf("--- memory written by another process: %d bytes ---", memBytes(e.Mem))
		}
		name, size := e.Shared.Path, e.Shared.Size
		return fmt.Sprintf("--- shared memory %s changed: %d bytes (%d pages), size %d ---", name, memBytes(e.Mem), (memBytes(e.Mem)+4095)/4096, size)
	}
	return fmt.Sprintf("event kind %d", e.Kind)
}

// memBytes counts the bytes of memory ranges.
func memBytes(ms []trace.Mem) int {
	n := 0
	for _, m := range ms {
		n += len(m.Data)
	}
	return n
}

// DescribeStatus renders a wait status like a shell would report it.
func DescribeStatus(st int32) string {
	ws := uint32(st)
	if ws&0x7f == 0 {
		return fmt.Sprintf("exited with status %d", (ws>>8)&0xff)
	}
	sig := int(ws & 0x7f)
	return fmt.Sprintf("killed by %s (status %d)", syscalls.SignalName(sig), 128+sig)
}

// ReadEvents calls f for events from..to (inclusive; to < 0: to the end)
// with their descriptions, and returns the trace's truncation notice. The
// blocking entry of a call is remembered so that its exit is described
// with the call's arguments.
func ReadEvents(path string, from, to int64, f func(i int64, e *trace.Event, text string)) (string, error) {
	var r EventReader
	defer r.Close()
	return r.Read(path, from, to, f)
}

// EventReader reads event descriptions window after window. Going forward
// it continues where the last window ended instead of decoding the trace
// from the start again, which keeps a timeline that pages through a large
// recording cheap; going backward it starts over.
type EventReader struct {
	path    string
	rd      *trace.Reader
	next    int64 // index of the event rd returns next
	entries map[int32]*trace.Event
	notice  string
}

// Read is ReadEvents on a reader that may be reused.
func (r *EventReader) Read(path string, from, to int64, f func(i int64, e *trace.Event, text string)) (string, error) {
	return r.each(path, from, to, func(i int64, e, entry *trace.Event) { f(i, e, DescribeEvent(e, entry)) })
}

// each calls f with events from..to and, for the exit of a call that
// blocked, its entry.
func (r *EventReader) each(path string, from, to int64, f func(i int64, e, entry *trace.Event)) (string, error) {
	if r.rd == nil || r.path != path || from < r.next {
		r.Close()
		rd, err := trace.Open(path)
		if err != nil {
			return "", err
		}
		r.rd, r.path, r.next, r.entries = rd, path, 0, map[int32]*trace.Event{}
	}
	for ; to < 0 || r.next <= to; r.next++ {
		e, err := r.rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			r.Close()
			return "", err
		}
		if e.Kind == trace.KindSyscallEntry {
			r.entries[e.Tid] = e
		}
		if r.next >= from {
			f(r.next, e, r.entries[e.Tid])
		}
	}
	return r.rd.Truncated(), nil
}

// Close releases the trace file.
func (r *EventReader) Close() {
	if r.rd != nil {
		r.rd.Close()
		r.rd = nil
	}
}
