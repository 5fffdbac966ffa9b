package debugger

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// EventInfo is one event as `rewind events --json`, MCP and the LLM
// window give it. The fields are a stable contract (docs/analysis.md): event,
// type, thread, time, text always; the others by type.
type EventInfo struct {
	Event  int64   `json:"event"`
	Type   string  `json:"type"` // syscall, signal, thread, exec, exit, end, rdtsc, cpuid, rdrand, rdseed, preempt, shared
	Thread int32   `json:"thread"`
	Time   float64 `json:"time"` // seconds since the recording started
	// System calls (type syscall, and thread for clone/clone3 of a thread).
	Name     string   `json:"name,omitempty"`
	Args     []string `json:"args,omitempty"`
	Result   string   `json:"result,omitempty"` // "?" for a call that does not return
	Errno    string   `json:"errno,omitempty"`
	Blocking bool     `json:"blocking,omitempty"` // the entry of a call that blocked
	Resumed  bool     `json:"resumed,omitempty"`  // the exit of a call that blocked
	// Buffered: made by the program through the hook page, with no stop
	// of the recorder (system call buffering).
	Buffered bool `json:"buffered,omitempty"`
	// ABI is "i386" for a call made with int $0x80 (Name is then its i386
	// name), empty for the syscall instruction.
	ABI string `json:"abi,omitempty"`
	// Signals.
	Signal string `json:"signal,omitempty"`
	Code   string `json:"code,omitempty"` // si_code: SEGV_MAPERR, SI_USER, SI_KERNEL, …
	Sync   bool   `json:"sync,omitempty"` // caused by the instruction (a fault), not sent
	Addr   string `json:"addr,omitempty"` // the faulting address (SIGSEGV, SIGBUS, SIGILL, SIGFPE)
	// Threads.
	Created int32 `json:"created,omitempty"` // the new thread of a clone
	Exited  bool  `json:"exited,omitempty"`
	// Exit.
	Status string `json:"status,omitempty"` // "exited with status 0", "killed by SIGSEGV (status 139)"
	// PC is where the thread was (signals, traps, preemptions, exec).
	PC string `json:"pc,omitempty"`
	// Shared memory that changed under the program: the object's name and
	// how many bytes of it the event brings.
	Object string `json:"object,omitempty"`
	Bytes  int    `json:"bytes,omitempty"`
	// Text is the strace-style line of the text listing.
	Text string `json:"text"`
}

// Types lists the event types, for filters.
var Types = []string{"syscall", "signal", "thread", "exec", "exit", "end", "rdtsc", "cpuid", "rdrand", "rdseed", "preempt", "shared"}

// atPCTypes are the types of the events that stop a thread at an
// instruction, whose pc the record shows. rdtscp is an rdtsc there.
var atPCTypes = map[trace.Kind]string{
	trace.KindExec: "exec", trace.KindSnapshot: "snapshot", trace.KindRdtsc: "rdtsc",
	trace.KindCpuid: "cpuid", trace.KindPreempt: "preempt",
}

// cloneThread is CLONE_THREAD.
const cloneThread = 0x10000

// EventRecord describes event i structurally. entry is the blocking entry
// of the same thread, for the exit of a call that blocked.
func EventRecord(i int64, e, entry *trace.Event) EventInfo {
	info := EventInfo{Event: i, Thread: e.Tid, Time: float64(e.Time) / 1e9, Text: DescribeEvent(e, entry)}
	switch e.Kind {
	case trace.KindSyscall, trace.KindSyscallExit, trace.KindSyscallEntry:
		info.Type = "syscall"
		regs, mem := e.Regs, append(recordedMemory(e.In), e.Mem...)
		if e.Kind == trace.KindSyscallExit && entry != nil {
			regs, mem = entry.Regs, append(recordedMemory(entry.In), e.Mem...)
		}
		c := syscalls.EventCall(e.Syscall, &regs, e.Flags&trace.FlagI386 != 0)
		info.Name = syscalls.Name(c.Nr)
		if c.I386 {
			info.Name, info.ABI = syscalls.NameI386(c.I386Nr), "i386"
		}
		finished := e.Kind != trace.KindSyscallEntry && e.Flags&trace.FlagNoReturn == 0
		if finished {
			// Outputs are shown as long as the result says (read's buffer).
			c.Ret = int64(e.ExitRegs[trace.RAX])
		}
		info.Args = syscalls.FormatArgs(&c, mem)
		info.Buffered = e.Flags&trace.FlagBuffered != 0
		switch {
		case e.Kind == trace.KindSyscallEntry:
			info.Blocking = true
		case !finished:
			info.Result = "?"
		default:
			info.Result, info.Errno = syscalls.FormatResult(&c)
			info.Resumed = e.Kind == trace.KindSyscallExit
		}
		if (info.Name == "clone" && c.Args[0]&cloneThread != 0) || (info.Name == "clone3" && e.NewTid != 0) {
			info.Type = "thread"
			info.Created = e.NewTid
		}
	case trace.KindSignal:
		info.Type = "signal"
		info.Signal = syscalls.SignalName(int(e.Signo))
		info.Sync = e.Flags&trace.FlagSyncSignal != 0
		info.PC = fmt.Sprintf("%#x", e.Regs[trace.RIP])
		if len(e.Siginfo) >= 24 {
			code := int32(binary.LittleEndian.Uint32(e.Siginfo[8:]))
			info.Code = siCodeName(int(e.Signo), code)
			switch e.Signo {
			case 4, 7, 8, 11: // SIGILL, SIGBUS, SIGFPE, SIGSEGV carry the address
				info.Addr = fmt.Sprintf("%#x", binary.LittleEndian.Uint64(e.Siginfo[16:]))
			}
		}
	case trace.KindThreadExit:
		info.Type, info.Exited = "thread", true
	case trace.KindExit:
		info.Type = "exit"
		info.Status = DescribeStatus(e.Status)
	case trace.KindEnd:
		info.Type = "end"
		info.Status = string(e.Data)
	case trace.KindExec, trace.KindSnapshot, trace.KindRdtsc, trace.KindCpuid, trace.KindRdrand, trace.KindPreempt:
		info.Type = atPCTypes[e.Kind]
		if e.Kind == trace.KindRdrand {
			info.Type = e.TrapName() // rdrand or rdseed
		}
		info.PC = fmt.Sprintf("%#x", e.Regs[trace.RIP])
	case trace.KindSharedMem:
		info.Type = "shared"
		if e.Shared != nil {
			info.Object = e.Shared.Path
		}
		info.Bytes = memBytes(e.Mem)
	default:
		info.Type = fmt.Sprintf("kind%d", e.Kind)
	}
	return info
}

// siCodeName names a signal's si_code (siginfo.h), or gives the number.
func siCodeName(sig int, code int32) string {
	generic := map[int32]string{0: "SI_USER", 0x80: "SI_KERNEL", -1: "SI_QUEUE", -2: "SI_TIMER", -3: "SI_MESGQ",
		-4: "SI_ASYNCIO", -5: "SI_SIGIO", -6: "SI_TKILL"}
	if n, ok := generic[code]; ok {
		return n
	}
	perSig := map[int]map[int32]string{
		11: {1: "SEGV_MAPERR", 2: "SEGV_ACCERR", 3: "SEGV_BNDERR", 4: "SEGV_PKUERR"},
		7:  {1: "BUS_ADRALN", 2: "BUS_ADRERR", 3: "BUS_OBJERR"},
		4:  {1: "ILL_ILLOPC", 2: "ILL_ILLOPN", 3: "ILL_ILLADR", 4: "ILL_ILLTRP", 5: "ILL_PRVOPC", 6: "ILL_PRVREG", 7: "ILL_COPROC", 8: "ILL_BADSTK"},
		8:  {1: "FPE_INTDIV", 2: "FPE_INTOVF", 3: "FPE_FLTDIV", 4: "FPE_FLTOVF", 5: "FPE_FLTUND", 6: "FPE_FLTRES", 7: "FPE_FLTINV", 8: "FPE_FLTSUB"},
		17: {1: "CLD_EXITED", 2: "CLD_KILLED", 3: "CLD_DUMPED", 4: "CLD_TRAPPED", 5: "CLD_STOPPED", 6: "CLD_CONTINUED"},
		5:  {1: "TRAP_BRKPT", 2: "TRAP_TRACE"},
	}
	if n, ok := perSig[sig][code]; ok {
		return n
	}
	return fmt.Sprint(code)
}

// EventFilter selects events for listings: by types (any of), thread (0:
// any) and text (substring, case-insensitive).
type EventFilter struct {
	Types  []string
	Thread int32
	Text   string
}

// Match says whether an event passes the filter.
func (f EventFilter) Match(e *EventInfo) bool {
	if f.Thread != 0 && e.Thread != f.Thread {
		return false
	}
	if len(f.Types) > 0 {
		ok := false
		for _, t := range f.Types {
			if t == e.Type {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return f.Text == "" || strings.Contains(strings.ToLower(e.Text), strings.ToLower(f.Text))
}

// ReadEventRecords lists events from..to (inclusive; to < 0: the end)
// that pass the filter, at most limit of them (0: no limit).
func ReadEventRecords(path string, from, to int64, f EventFilter, limit int) ([]EventInfo, string, error) {
	var out []EventInfo
	warn, err := WalkEventRecords(path, from, to, f, func(e EventInfo) {
		if limit <= 0 || len(out) < limit {
			out = append(out, e)
		}
	})
	return out, warn, err
}

// WalkEventRecords calls fn with each event from..to (inclusive; to < 0:
// the end) that passes the filter, without keeping them: a window may be
// the whole recording. It returns the trace's truncation notice.
func WalkEventRecords(path string, from, to int64, f EventFilter, fn func(EventInfo)) (string, error) {
	var r EventReader
	defer r.Close()
	return r.each(path, from, to, func(i int64, e, entry *trace.Event) {
		info := EventRecord(i, e, entry)
		if f.Match(&info) {
			fn(info)
		}
	})
}
