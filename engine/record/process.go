package record

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/attach"
	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// process is one process of the recorded tree. Its threads are scheduled
// with every other thread of the tree: one runs at a time, whatever its
// process, so the log is one global order of everything the tree did.
type process struct {
	pid    int
	parent int // the recorded parent's pid (0 for the first process)
	// mem is the process's memory; it is reopened at each exec because the
	// file refers to one address space.
	mem *ptrace.Mem
	// code is the patched code of its address space (engine/patch): a copy
	// of its parent's after a fork, the parent's own when they share memory
	// (vfork), a new one at each exec.
	code *patch.Space
	// hooks are the hook stubs of its address space and the sites patched
	// to use them (hook.go): as code, a copy of its parent's after a fork,
	// the parent's own under vfork, a new one at each exec.
	hooks *hookSpace
	// vdso is its vDSO before it was patched, for the detach of a
	// process rewind attached to (a fork's copy is its parent's; nil
	// otherwise).
	vdso *attach.Patch
	// vdsoSites are the system calls of its vDSO's stubs, set at its
	// exec, patched to call the hook at the execve's exit (patchVDSOSites).
	vdsoSites []patch.VDSOSite
	// tracedExits are the ends of its emulated tracees that are not its
	// children, for its wait (emuptrace.go).
	tracedExits []tracedExit
	// knownGen is the recorder's knownGen when the known sites were last
	// patched in its code (knownsites.go).
	knownGen int
	// cpu is the run queue its threads take turns on (cpus.go).
	cpu *cpu
	// runFlags are what its hook was told of how it runs (sidebyside.go).
	runFlags runFlags
	// sharedListed: the shared memory tracker lists every shared mapping
	// of its address space (shared.go), so that a new one is added to the
	// list rather than read with the rest from /proc/PID/maps. True after
	// its exec and after each rescan; false in a new process, which has
	// what its parent mapped, and in the parent of a vfork child, which
	// maps into their memory.
	sharedListed bool
	// syncDue: its shared memory is to be compared when it next gets its
	// run queue (it joined the serial queue: logExit).
	syncDue bool
}

// newProcess registers a process the tree just created (fork, vfork, or a
// clone without CLONE_THREAD). Its memory is opened at its first stop.
func (r *Recorder) newProcess(pid, parent int) *process {
	p := &process{pid: pid, parent: parent, cpu: r.serial}
	p.code = r.inheritCode(r.procs[parent], pid)
	if pp := r.procs[parent]; pp != nil {
		p.cpu = pp.cpu // until its parent's fork is logged (sidebyside.go)
		p.vdso = pp.vdso
		p.knownGen = pp.knownGen
		p.hooks = pp.hooks.clone()
		if pp.code == p.code {
			p.hooks = pp.hooks // the same memory (vfork)
			pp.sharedListed = false
		}
	}
	r.procs[pid] = p
	r.guardDirty = true
	return p
}

// othersInSpace says whether a live thread other than t runs in the
// address space of t's process: of another process sharing it (a vfork
// child), or, with sameProcess, of the process itself too.
func (r *Recorder) othersInSpace(t *thread, sameProcess bool) bool {
	for _, u := range r.threads {
		if u != t && u.proc.code == t.proc.code && u.state != gone && (sameProcess || u.proc != t.proc) {
			return true
		}
	}
	return false
}

// openMem opens the process's memory if it is not yet open.
func (p *process) openMem() error {
	if p.mem != nil {
		return nil
	}
	m, err := ptrace.OpenMem(p.pid)
	if err != nil {
		return fmt.Errorf("process %d: %w", p.pid, err)
	}
	p.mem = m
	return nil
}

// reopenMem replaces the memory file after an exec.
func (p *process) reopenMem() error {
	if p.mem != nil {
		p.mem.Close()
		p.mem = nil
	}
	return p.openMem()
}

// close releases the process's memory file once it is gone.
func (p *process) close() {
	if p.mem != nil {
		p.mem.Close()
		p.mem = nil
	}
}

// isProcess tells whether the task a clone event created is a process of
// its own rather than a thread: fork and vfork always make one; clone does
// unless CLONE_THREAD was given, which only /proc tells reliably here (clone3
// keeps its flags in memory).
func isProcess(event int, child int) bool {
	if event != unix.PTRACE_EVENT_CLONE {
		return true
	}
	tgid, err := ptrace.Tgid(child)
	return err == nil && tgid == child
}

// execData is what an exec event says of the new image (trace.ExecInfo):
// the executable's path (exe, its /proc link) and argv, NUL-separated,
// read at the exec stop before the program can change its argv: from its
// memory, where the layout says, as /proc/PID/cmdline would.
func execData(pid int, exe string, m *ptrace.Mem, l trace.MMLayout) []byte {
	var argv []byte
	if n := l.ArgEnd - l.ArgStart; l.ArgStart != 0 && n > 0 && n <= maxArgv {
		argv = make([]byte, n)
		if got, err := m.ReadAt(argv, l.ArgStart); err != nil || got != len(argv) {
			argv = nil
		}
	}
	if argv == nil {
		argv, _ = os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	}
	return append([]byte(exe+"\x00"), bytes.TrimSuffix(argv, []byte{0})...)
}

// maxArgv bounds the argv execData reads from a process's memory (the
// kernel's own bound on the arguments and environment of an exec is a
// quarter of the stack limit).
const maxArgv = 32 << 20

// killAll kills every process of the tree still alive.
func (r *Recorder) killAll() {
	for pid := range r.procs {
		unix.Kill(pid, unix.SIGKILL)
	}
	if r.pid != 0 {
		unix.Kill(r.pid, unix.SIGKILL)
	}
}

// onProcessExit records the end of a process (its leader's death, which the
// kernel reports once every other thread is gone). The recording goes on
// while any process of the tree lives: orphans and daemons included.
func (r *Recorder) onProcessExit(t *thread, st ptrace.Status) error {
	p := t.proc
	if p.pid == r.pid {
		r.status = st.Raw
		r.rootDone = true
	}
	if err := r.syncDropped(t); err != nil {
		return err
	}
	p.close()
	r.shared.forget(p.pid) // what it alone mapped is gone
	r.publishShared()
	delete(r.procs, p.pid)
	r.bal.remove(p.pid, false)
	r.daemonCheck = true
	r.ptraceProcessGone(p)
	r.guardDirty = true // its pid may go to another process
	if err := r.log(&trace.Event{Kind: trace.KindExit, Tid: int32(t.tid), Status: int32(st.Raw)}); err != nil {
		return err
	}
	if len(r.procs) == 0 {
		r.done = true
	}
	return nil
}

// systemDirs hold the files a package manager owns: an executable there is
// expected to be on the replaying machine as it was, and is not stored.
var systemDirs = []string{"/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/"}

// hostsFile reports whether the file at path, as rewind sees it, is the
// executable behind link (/proc/PID/exe). A process in a private mount
// namespace (unshare -m, a sandbox) or a chroot may run a file at a system
// path that is not the system's: one on a mount only it sees, gone with its
// namespace, which replay must get from the recording.
func hostsFile(link, path string) bool {
	var a, b unix.Stat_t
	if unix.Stat(link, &a) != nil || unix.Stat(path, &b) != nil {
		return false
	}
	return a.Dev == b.Dev && a.Ino == b.Ino
}

// captureExe stores the executable a process exec'd in the trace, unless it
// is a system file: build outputs (go test's binary, a compiler's a.out)
// are often deleted right after they ran, and replay must exec them again.
func (r *Recorder) captureExe(pid int) *trace.MapFile {
	link := fmt.Sprintf("/proc/%d/exe", pid)
	exe, err := os.Readlink(link)
	if err != nil {
		return nil
	}
	for _, d := range systemDirs {
		if strings.HasPrefix(exe, d) && hostsFile(link, exe) {
			return nil
		}
	}
	m, err := r.files.captureFile(link, 0, 0)
	if err != nil {
		r.warnOnce(fmt.Sprintf("exe of %d", pid), "rewind: warning: cannot store %s for replay: %v\n", exe, err)
		return nil
	}
	m.Path = strings.TrimSuffix(exe, " (deleted)")
	return m
}
