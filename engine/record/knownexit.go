package record

import (
	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Calls whose exit is known at their entry. Every process's loader makes
// an arch_prctl(ARCH_SET_FS) and a set_robust_list at sites of neither
// shape the hook patches (other instructions stand between the number's
// mov and the syscall): each was a seccomp stop at its entry and a stop
// at its exit. Their results follow from their arguments alone (a
// canonical address; the size of the robust list's head), and they change
// no register but rax and, for ARCH_SET_FS, fs_base: the recorder logs the
// exit at the entry and lets the call run with PTRACE_CONT, which makes no
// exit stop. Replay makes both calls again and checks their results.

// archSetFS is arch_prctl's ARCH_SET_FS (asm/prctl.h).
const archSetFS = 0x1002

// robustListHeadSize is sizeof(struct robust_list_head) on x86-64: the
// only size set_robust_list takes.
const robustListHeadSize = 24

// canonicalEnd bounds the addresses ARCH_SET_FS takes with 4-level page
// tables (TASK_SIZE_MAX): below it, 5-level ones take them too.
const canonicalEnd = 1<<47 - 4096

// knownExit returns the registers c, t's call at its seccomp stop, leaves,
// when they are known: false for every other call, and where something
// else may see or change it (a filter of the program's own, a tracer of
// the recording, a patched site, a refused or emulated call, a held
// signal, an entry reached through a syscall-entry stop, whose seccomp
// stop is still to come), or may take the thread's registers while the
// call is logged but not made (a ring buffer's snapshot, --keep-last). Nor
// where the exit's handling would inject a call into the thread (the stub
// page patchLearned may map for sites learned since the process last
// patched): from a seccomp stop, the thread would make the injected
// registers' call in place of its own (cc1's loader then ran without its
// fs, and crashed, in 7 recordings of make -j2 in 40, the cache off).
func (r *Recorder) knownExit(t *thread, c *syscalls.Call) (trace.Regs, bool) {
	if !r.filtered || r.opts.KeepLast > 0 || t.ownFilter || t.i386 || t.pt.tracer != 0 || t.pt.emulated || t.refused || t.seenEntry ||
		t.hookSite.Shape != 0 || len(t.held) > 0 || t.injecting != nil || t.split || t.proc.knownGen != r.knownGen {
		return trace.Regs{}, false
	}
	exit := t.entry
	exit[trace.RAX] = 0
	switch {
	case c.Nr == unix.SYS_ARCH_PRCTL && c.Args[0] == archSetFS && c.Args[1] < canonicalEnd:
		exit[trace.FSBase] = c.Args[1]
	case c.Nr == unix.SYS_SET_ROBUST_LIST && c.Args[1] == robustListHeadSize:
	default:
		return trace.Regs{}, false
	}
	return exit, true
}
