package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

func newEventsCmd() *cobra.Command {
	var from, to int64
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "events [--from N] [--to M] TRACE",
		Short: "List the recorded events, strace-style",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if jsonOut {
				return errNotImplemented("rewind events --json")
			}
			return runEvents(os.Stdout, args[0], from, to)
		},
	}
	cmd.Flags().Int64Var(&from, "from", 0, "first event")
	cmd.Flags().Int64Var(&to, "to", -1, "last event")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "NDJSON output")
	return cmd
}

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

func runEvents(w io.Writer, path string, from, to int64) error {
	rd, err := trace.Open(path)
	if err != nil {
		return err
	}
	defer rd.Close()
	entries := map[int32]*trace.Event{}
	for i := int64(0); ; i++ {
		e, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if e.Kind == trace.KindSyscallEntry {
			entries[e.Tid] = e
		}
		if i < from || (to >= 0 && i > to) {
			continue
		}
		fmt.Fprintf(w, "#%-7d %7d %10.6f %s\n", i, e.Tid, float64(e.Time)/1e9, describeEvent(e, entries[e.Tid]))
	}
	if warn := rd.Truncated(); warn != "" {
		fmt.Fprintf(os.Stderr, "rewind: warning: %s\n", warn)
	}
	return nil
}

// describeEvent renders one event as a line of text.
func describeEvent(e, entry *trace.Event) string {
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
		return "+++ " + describeStatus(e.Status) + " +++"
	}
	return fmt.Sprintf("event kind %d", e.Kind)
}
