package replay

import (
	"encoding/binary"
	"fmt"

	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Pid namespaces are emulated: the replay creates none (unshare and
// CLONE_NEWPID's effect are not reproduced; clone is re-executed without
// regard to it), and every call that tells a pid or tid to the program
// (getpid, gettid, getppid, clone's result, wait4, the siginfo of a signal)
// gives the recorded answer, as the program saw it in its namespace. Threads
// are known by the recorder's ids for them, the Tid of their events (see
// engine/record/pidns.go).

// cloneNamespaces are clone's flags for new namespaces (CLONE_NEWNS,
// CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID,
// CLONE_NEWNET), taken off a re-executed clone as unshare is emulated: a
// real pid namespace would also hang the replay, its init waiting at its
// exit for zombies whose wait4 the replay does not execute.
const cloneNamespaces = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000

// newTid returns the recorded id of the thread clone event e created: the
// id its events carry. Clone's own result is it only outside pid
// namespaces (a trace without NewTid predates the distinction).
func newTid(e *trace.Event) int32 {
	if e.NewTid != 0 {
		return e.NewTid
	}
	return int32(e.ExitRegs[trace.RAX])
}

// ownTid returns the id the thread clone event e created had in its own pid
// namespace.
func ownTid(e *trace.Event) int32 {
	if e.Aux != 0 {
		return int32(e.Aux)
	}
	return newTid(e)
}

// setChildTid writes, for a clone with CLONE_CHILD_SETTID, the id the
// kernel wrote in the new thread's memory when recorded: its own id, where
// the replaying kernel wrote its new one.
func setChildTid(nt *rthread, e *trace.Event, c syscalls.Call) error {
	if c.Args[0]&cloneChildSetTid == 0 || c.Args[3] == 0 {
		return nil
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(ownTid(e)))
	if _, err := nt.proc.mem.WriteAt(b[:], c.Args[3]); err != nil {
		return fmt.Errorf("new thread %d: write its tid at CLONE_CHILD_SETTID: %w", nt.rec, err)
	}
	return nil
}
