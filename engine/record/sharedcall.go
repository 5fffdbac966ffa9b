package record

// Shared memory at system calls: which calls map, truncate or write what
// another process maps (sharedSyscall), what is compared after them
// (sharedAfter), and the pages logged so that a replay of one process
// sees what the others wrote.

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
	"golang.org/x/sys/unix"
)

// sharedEntry adjusts a system call at its entry: madvise(MADV_FREE) lets
// the kernel drop the pages whenever it likes, so what they read afterwards
// depends on the machine's memory pressure. It becomes MADV_COLD, which
// keeps their contents (one of MADV_FREE's allowed outcomes) and fails in
// the same cases for anonymous memory; replay emulates it.
func (r *Recorder) sharedEntry(t *thread, c *syscalls.Call) error {
	if c.Nr != unix.SYS_MADVISE || int32(c.Args[2]) != syscalls.MadvFree {
		return nil
	}
	regs := t.entry
	regs[trace.RDX] = unix.MADV_COLD
	if err := ptrace.SetRegs(t.tid, &regs); err != nil {
		return fmt.Errorf("madvise(MADV_FREE) as MADV_COLD: %w", err)
	}
	return nil
}

// bigShared is the amount of shared memory one check compares past which
// the recorder warns that comparing it at every blocking call costs.
const bigShared = 256 << 20

// sharedCheck says which objects to compare after a system call.
type sharedCheck int

// sharedSyscall follows the mappings a successful system call changed and
// fills e with what replay needs (e.Shared for a mapping of a shared
// object; e.Mem for private file pages madvise dropped). It is called before
// e is logged; what it returns says what sharedAfter compares once it is.
func (r *Recorder) sharedSyscall(t *thread, c *syscalls.Call, e *trace.Event) (sharedCheck, objKey, error) {
	if t.refused || (c.Ret < 0 && c.Ret >= -4095) {
		return checkNone, objKey{}, nil
	}
	p := r.procOf(t)
	sm := r.shared
	chk := checkNone
	if syscalls.MayBlock(c) {
		// It may have waited for another process: whatever that process
		// did to the memory they share is there now.
		chk = checkAll
	}
	switch c.Nr {
	case unix.SYS_MMAP:
		addr, length, flags := uint64(c.Ret), c.Args[1], c.Args[3]
		if flags&unix.MAP_SHARED != 0 { // MAP_SHARED or MAP_SHARED_VALIDATE
			return checkAll, objKey{}, r.mapShared(t, p, c, e)
		}
		if sm.tracking(p.pid) && sm.overlaps(p.pid, addr, addr+length) {
			t.droppedShared = true // a private mapping replaced shared ones
			return chk, objKey{}, nil
		}
	case unix.SYS_MREMAP:
		old, oldLen, newLen := c.Args[0], c.Args[1], c.Args[2]
		if newLen > oldLen && oldLen > 0 {
			// The pages a private file mapping grew by read the file.
			if err := r.filePages(p, uint64(c.Ret)+oldLen, newLen-oldLen, e); err != nil {
				return chk, objKey{}, err
			}
		}
		if sm.tracking(p.pid) && (sm.overlaps(p.pid, old, old+max(oldLen, 1)) || sm.overlaps(p.pid, uint64(c.Ret), uint64(c.Ret)+newLen)) {
			t.droppedShared = true
			return checkAll, objKey{}, nil
		}
	case unix.SYS_MUNMAP:
		if sm.tracking(p.pid) && sm.overlaps(p.pid, c.Args[0], c.Args[0]+c.Args[1]) {
			t.droppedShared = true
			return chk, objKey{}, nil
		}
	case unix.SYS_SHMAT:
		return checkAll, objKey{}, r.mapShared(t, p, c, e)
	case unix.SYS_SHMDT:
		if m := r.sharedMem().mappingAt(p.pid, c.Args[0]); m != nil {
			e.Shared = m.traceMap()
		}
		t.droppedShared = true
		return chk, objKey{}, nil
	case unix.SYS_MADVISE:
		if a := int32(c.Args[2]); a == unix.MADV_DONTNEED || a == unix.MADV_DONTNEED_LOCKED {
			// The dropped pages of a private file mapping read the file again.
			return chk, objKey{}, r.filePages(p, c.Args[0], c.Args[1], e)
		}
	}
	if !sm.tracking(p.pid) || chk == checkAll {
		return chk, objKey{}, nil
	}
	// A call that writes a file the program maps: its pages changed.
	fd := -1
	switch c.Nr {
	case unix.SYS_PWRITE64, unix.SYS_PWRITEV, unix.SYS_PWRITEV2, unix.SYS_FTRUNCATE, unix.SYS_FALLOCATE,
		unix.SYS_WRITE, unix.SYS_WRITEV, unix.SYS_SENDFILE:
		fd = int(int32(c.Args[0]))
	case unix.SYS_COPY_FILE_RANGE, unix.SYS_SPLICE:
		fd = int(int32(c.Args[2]))
	case unix.SYS_TEE:
		fd = int(int32(c.Args[1]))
	case unix.SYS_OPEN, unix.SYS_CREAT:
		if c.Nr == unix.SYS_CREAT || c.Args[1]&unix.O_TRUNC != 0 {
			fd = int(c.Ret)
		}
	case unix.SYS_OPENAT:
		if c.Args[2]&unix.O_TRUNC != 0 {
			fd = int(c.Ret)
		}
	case unix.SYS_OPENAT2:
		var how [8]byte // struct open_how starts with the flags
		if _, err := p.mem.ReadAt(how[:], c.Args[2]); err != nil || how[1]&(unix.O_TRUNC>>8) != 0 {
			fd = int(c.Ret)
		}
	case unix.SYS_TRUNCATE:
		return checkFiles, objKey{}, nil
	}
	if fd < 0 {
		return chk, objKey{}, nil
	}
	var st unix.Stat_t
	if err := unix.Stat(fmt.Sprintf("/proc/%d/fd/%d", t.tid, fd), &st); err != nil {
		return chk, objKey{}, nil
	}
	key := objKey{major: uint64(unix.Major(st.Dev)), minor: uint64(unix.Minor(st.Dev)), ino: st.Ino}
	if sm.objects[key] == nil {
		return chk, objKey{}, nil
	}
	return checkFile, key, nil
}

// mapShared follows a new shared mapping (mmap MAP_SHARED, shmat): e.Shared
// names its object, which replay maps there.
func (r *Recorder) mapShared(t *thread, p sharedProc, c *syscalls.Call, e *trace.Event) error {
	sm := r.sharedMem()
	var file *os.File
	var readOnly roMapping
	var fileKey objKey
	if c.Nr == unix.SYS_MMAP && c.Args[3]&unix.MAP_ANONYMOUS == 0 {
		fd := int(int32(c.Args[4]))
		path := fmt.Sprintf("/proc/%d/fd/%d", t.tid, fd)
		var st unix.Stat_t
		if err := unix.Stat(path, &st); err != nil {
			return fmt.Errorf("shared mapping of fd %d: %w", fd, err)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			start := uint64(c.Ret)
			m := sharedMapping{start: start, end: start + (c.Args[1]+pageSize-1)&^(pageSize-1), off: c.Args[5]}
			if readOnlyFd(t.tid, fd) {
				readOnly = roMapping{p.pid, m.start, m.end}
			}
			fileKey = objKey{major: uint64(unix.Major(st.Dev)), minor: uint64(unix.Minor(st.Dev)), ino: st.Ino}
			if m.obj = sm.byFile[fileKey]; m.obj != nil && r.ownsShared(t) && !sm.overlaps(p.pid, m.start, m.end) {
				if err := sm.addMapping(p, m, readOnly); err != nil {
					return err
				}
				m.obj.statSize()
				e.Shared = m.traceMap()
				return nil
			}
			// Opened anew rather than shared with the program: a lock
			// on its open file must not outlive the program's close.
			if f, err := os.Open(path); err == nil {
				file = f
			}
		case unix.S_IFCHR:
			if unix.Major(st.Rdev) != 1 || unix.Minor(st.Rdev) != 5 { // /dev/zero is anonymous shared memory
				r.warnOnce("shared device mapping", "rewind: warning: shared mapping of a device (fd %d) at event %d is not supported; replay maps zeros there\n", fd, r.events())
				return nil
			}
		}
	}
	if err := sm.rescanMade(p, file, readOnly); err != nil {
		return err
	}
	m := sm.mappingAt(p.pid, uint64(c.Ret))
	if m == nil {
		return fmt.Errorf("%s at %#x: no shared mapping there in /proc/%d/maps", syscalls.Name(c.Nr), uint64(c.Ret), p.pid)
	}
	if fileKey != (objKey{}) && m.obj.file != nil {
		sm.byFile[fileKey] = m.obj
	}
	m.obj.statSize()
	e.Shared = m.traceMap()
	return nil
}

// readOnlyFd says whether descriptor fd of thread tid was opened read-only:
// a shared mapping of it can never be written (mmap refuses PROT_WRITE,
// mprotect cannot add it). procfs gives the link /proc/PID/fd/N the owner
// permissions of the open file's mode (S_IWUSR where it was opened for
// writing), one lstat where fdinfo's flags take an open and a read.
func readOnlyFd(tid, fd int) bool {
	var st unix.Stat_t
	if err := unix.Lstat(fmt.Sprintf("/proc/%d/fd/%d", tid, fd), &st); err != nil {
		return false
	}
	return st.Mode&unix.S_IFMT == unix.S_IFLNK && st.Mode&unix.S_IRUSR != 0 && st.Mode&unix.S_IWUSR == 0
}

// ownsShared says whether the tracker's list of the shared mappings of
// t's process is whole (sharedListed) and no other live process shares
// its memory (a vfork child maps into it).
func (r *Recorder) ownsShared(t *thread) bool {
	return t.proc.sharedListed && !r.othersInSpace(t, false)
}

// filePages logs with e the pages of private file mappings in [addr,
// addr+length) that are not zero: they read the file (after an
// madvise(MADV_DONTNEED) dropped them, or an mremap grew the mapping), but
// replay rebuilt such mappings as anonymous memory, whose pages read zero.
func (r *Recorder) filePages(p sharedProc, addr, length uint64, e *trace.Event) error {
	maps, err := ptrace.ReadMaps(p.pid)
	if err != nil {
		return fmt.Errorf("madvise: %w", err)
	}
	end := addr + length
	page := make([]byte, pageSize)
	for _, m := range maps {
		if m.Inode == 0 || m.Perms[3] != 'p' || m.Path == "" || strings.HasPrefix(m.Path, "[") {
			continue
		}
		for a := max(m.Start, addr&^(pageSize-1)); a < min(m.End, end); a += pageSize {
			n, _ := p.mem.ReadAt(page, a)
			if n < pageSize || isZero(page) {
				continue
			}
			e.Mem = append(e.Mem, trace.Mem{Addr: a, Data: bytes.Clone(page)})
		}
	}
	return nil
}

func isZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// sharedDropped follows, once the call that dropped shared mappings of t's
// process is logged (sharedSyscall's droppedShared), what it mapped now:
// what it wrote through the dropped mappings is compared first
// (syncDropped), after the call's event, before which replay runs the
// process's code up to the call.
func (r *Recorder) sharedDropped(t *thread) error {
	if !t.droppedShared {
		return nil
	}
	t.droppedShared = false
	if err := r.syncDropped(t); err != nil {
		return err
	}
	return r.shared.rescan(r.procOf(t), nil)
}

// sharedAfter compares what chk names, after the event that asked for it
// was logged, and logs the changes on thread t.
func (r *Recorder) sharedAfter(t *thread, chk sharedCheck, key objKey) error {
	var only func(*sharedObject) bool
	switch chk {
	case checkNone:
		return nil
	case checkFiles:
		only = func(o *sharedObject) bool { return !o.key.sysv && o.file != nil }
	case checkFile:
		only = func(o *sharedObject) bool { return o.key == key }
	}
	return r.syncShared(t, r.procOf(t), only)
}

// syncDropped compares the objects with a file that t's process mapped,
// after a call or an event that dropped mappings (an unmapping, an exec,
// its end) is logged, through their files (what is mapped where they were
// may be another's now): what it wrote there since the last comparison is
// in replay's copy (replay ran it), and the hashes must say so before the
// mapping is forgotten, or a later truncation of the file, or a new file
// with the same inode, would leave those bytes in replay's copy unseen
// (sqlite's -shm index, reset by the next process that opens the database
// alone).
func (r *Recorder) syncDropped(t *thread) error {
	if !r.shared.tracking(t.proc.pid) {
		return nil
	}
	return r.syncShared(t, r.procOf(t), func(o *sharedObject) bool { return o.file != nil })
}

// publishShared tells the hook of every process which files the tree maps
// shared (sharedMem.hookList) when that set changed: a process that maps
// none of them must leave its writes to them to the recorder too. A
// process without a hook page yet (before its exec's end) is told by
// installHook.
func (r *Recorder) publishShared() {
	sm := r.shared
	if sm == nil || !sm.hooked || !sm.remap {
		return
	}
	sm.remap = false
	sig := sm.filesSignature()
	if sig == sm.published {
		return
	}
	sm.published = sig
	for _, p := range r.procs {
		if p.mem != nil {
			hook.SetSharedMaps(p.mem, sm.hookList(p.pid, sm.maps[p.pid])) // no page: nothing to tell
		}
	}
}

// writesOthersShared says whether t's call, at its entry, writes a file
// another process of the tree maps shared: run side by side, that process
// could see the bytes arrive between two of its events, where replay shows
// them only at one (a reader that spins on a read-only mapping of a file
// its writer writes with pwrite would never see them in replay).
func (r *Recorder) writesOthersShared(t *thread) bool {
	if !r.shared.userFileMapped() {
		return false // no stat at each traced write of a make, whose processes map only gconv-modules.cache
	}
	a := func(i int) int { return int(int32(t.entry[argRegs[i]])) }
	fd := -1
	switch t.entry[trace.OrigRAX] {
	case unix.SYS_WRITE, unix.SYS_PWRITE64, unix.SYS_WRITEV, unix.SYS_PWRITEV, unix.SYS_PWRITEV2,
		unix.SYS_FTRUNCATE, unix.SYS_FALLOCATE, unix.SYS_SENDFILE:
		fd = a(0)
	case unix.SYS_COPY_FILE_RANGE, unix.SYS_SPLICE:
		fd = a(2)
	case unix.SYS_TEE:
		fd = a(1)
	}
	if fd < 0 {
		return false
	}
	var st unix.Stat_t
	if unix.Stat(fmt.Sprintf("/proc/%d/fd/%d", t.tid, fd), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false
	}
	key := objKey{major: uint64(unix.Major(st.Dev)), minor: uint64(unix.Minor(st.Dev)), ino: st.Ino}
	return r.shared.mappedByOther(t.proc.pid, key)
}

// syncShared compares the objects p maps and logs the changes on thread t.
// The scheduler calls it where memory other processes write becomes
// visible to t: a switch from another process of the tree.
func (r *Recorder) syncShared(t *thread, p sharedProc, only func(*sharedObject) bool) error {
	if r.shared == nil {
		return nil
	}
	before := r.shared.stats.compared
	evs, err := r.shared.check(p, only)
	if err != nil {
		return err
	}
	if n := r.shared.stats.compared - before; n > bigShared {
		r.warnOnce("shared memory size", "rewind: warning: %d MiB of shared memory hold data at event %d: every blocking system call compares it, which slows the recording\n", n>>20, r.events())
	}
	for _, e := range evs {
		e.Tid = int32(t.tid)
		if err := r.log(e); err != nil {
			return err
		}
	}
	return nil
}

// sharedOnEvent follows the events logged outside system calls: an exec
// empties the process's address space; a signal or a preemption is a point
// where the thread may have been waiting for another process.
func (r *Recorder) sharedOnEvent(e *trace.Event) error {
	if r.shared == nil {
		return nil
	}
	if debug && (e.Kind == trace.KindExit || e.Kind == trace.KindEnd) {
		fmt.Fprintln(os.Stderr, "rec:", r.shared.report())
	}
	t := r.threads[int(e.Tid)]
	if t == nil {
		return nil
	}
	switch e.Kind {
	case trace.KindExec:
		if err := r.syncDropped(t); err != nil {
			return err
		}
		r.shared.forget(r.procOf(t).pid)
		t.proc.sharedListed = true // an exec leaves nothing shared
		r.publishShared()
	case trace.KindSignal, trace.KindPreempt:
		return r.syncShared(t, r.procOf(t), nil)
	}
	return nil
}

const (
	checkNone  sharedCheck = iota
	checkFiles             // the file objects (a path-based truncate)
	checkFile              // the object of one file (checkKey)
	checkAll
)
