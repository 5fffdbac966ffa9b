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
		c := syscalls.Call{Nr: int(e.Syscall), Args: [6]uint64{regs[trace.RDI], regs[trace.RSI], regs[trace.RDX], regs[trace.R10], regs[trace.R8], regs[trace.R9]}}
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
		c := syscalls.Call{Nr: int(e.Syscall), Args: [6]uint64{e.Regs[trace.RDI], e.Regs[trace.RSI], e.Regs[trace.RDX], e.Regs[trace.R10], e.Regs[trace.R8], e.Regs[trace.R9]}}
		return syscalls.FormatCall(&c, recordedMemory(e.In)) + " <blocking...>"
	case trace.KindSignal:
		kind := "async"
		if e.Flags&trace.FlagSyncSignal != 0 {
			kind = "sync"
		}
		return fmt.Sprintf("--- %s (%s) at rip %#x ---", syscalls.SignalName(int(e.Signo)), kind, e.Regs[trace.RIP])
	case trace.KindRdtsc:
		name := "rdtsc"
		if e.Flags&trace.FlagRdtscp != 0 {
			name = "rdtscp"
		}
		return fmt.Sprintf("%s at rip %#x = %#x", name, e.Regs[trace.RIP], e.Value)
	case trace.KindCpuid:
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
	case trace.KindThreadExit:
		return "+++ thread exited +++"
	case trace.KindExit:
		return "+++ " + DescribeStatus(e.Status) + " +++"
	}
	return fmt.Sprintf("event kind %d", e.Kind)
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

// ReadEvents calls f with each event of the trace at path numbered from
// through to (to < 0: the end), described as text, and returns the reader's
// truncation warning. Blocking entries are remembered so that the exit of a
// split call is shown with its arguments.
func ReadEvents(path string, from, to int64, f func(i int64, e *trace.Event, text string)) (string, error) {
	rd, err := trace.Open(path)
	if err != nil {
		return "", err
	}
	defer rd.Close()
	entries := map[int32]*trace.Event{}
	for i := int64(0); to < 0 || i <= to; i++ {
		e, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		if e.Kind == trace.KindSyscallEntry {
			entries[e.Tid] = e
		}
		if i >= from {
			f(i, e, DescribeEvent(e, entries[e.Tid]))
		}
	}
	return rd.Truncated(), nil
}
