package replay

// Shared memory. The recording names each object the program mapped shared
// (a file or memfd mapped MAP_SHARED, a SysV segment, anonymous shared
// memory: trace.SharedMap). Replay backs each with a memfd of its own,
// which the replaying process opens and maps wherever the recording mapped
// the object: two mappings of one object stay one memory (a write through
// one shows in the other, as mremap's aliases and SysV's double attachments
// need), and the object's contents are written through rewind's own
// descriptor, whatever the protection of the mappings. What the recording
// saw change in an object (KindSharedMem: written by the kernel for a
// write() to the file, by another process, or on first mapping) is written
// into the memfd where the event stands.
//
// Checkpoints are clones of the replaying process, so they share these
// memfds with it: each checkpoint saves the objects' contents and restoring
// it writes them back.

import (
	"bytes"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Flags of mmap and shmat that replay handles.
const (
	mapSharedValidate = 0x3
	mapHugeMask       = 0x3f << 26
	mapSync           = 0x80000
	shmRdonly         = 0o10000
	shmRemap          = 0o40000
	shmExec           = 0o100000
	pageSize          = 4096
	redZone           = 128
	madvDontfork      = 10
	madvDofork        = 11
	madvWipeonfork    = 18
	madvKeeponfork    = 19
)

// sharedObj is replay's copy of one shared object of the recording.
type sharedObj struct {
	id   uint32
	f    *os.File // the memfd, rewind's descriptor
	size uint64
	path string
	// fds is the object's descriptor in each replaying process, by pid.
	fds map[int]int
	// saved is the contents the last checkpoint saved, shared with the
	// next one when they did not change.
	saved []byte
}

// sharedState is the session's shared memory.
type sharedState struct {
	objs map[uint32]*sharedObj
	// files are every memfd made: checkpoints refer to objects the live
	// replay no longer has, so they close with the session.
	files []*os.File
	// forkAdvice: the program used MADV_WIPEONFORK or MADV_DONTFORK, which
	// checkpoint clones must not inherit (see forkCopy).
	forkAdvice bool
}

// close releases the memfds.
func (sh *sharedState) close() {
	for _, f := range sh.files {
		f.Close()
	}
	sh.files, sh.objs = nil, nil
}

// sharedObject returns replay's copy of the object sm names, made on first
// use, sized as sm says.
func (s *Session) sharedObject(sm *trace.SharedMap) (*sharedObj, error) {
	if s.sh.objs == nil {
		s.sh.objs = map[uint32]*sharedObj{}
	}
	obj := s.sh.objs[sm.Object]
	if obj == nil {
		fd, err := unix.MemfdCreate(fmt.Sprintf("rewind-shared-%d", sm.Object), unix.MFD_CLOEXEC)
		if err != nil {
			return nil, fmt.Errorf("shared memory object %d (%s): memfd_create: %w", sm.Object, sm.Path, err)
		}
		obj = &sharedObj{id: sm.Object, f: os.NewFile(uintptr(fd), sm.Path), path: sm.Path, fds: map[int]int{}}
		s.sh.files = append(s.sh.files, obj.f)
		s.sh.objs[sm.Object] = obj
	}
	if sm.Path != "" {
		obj.path = sm.Path
	}
	if obj.size != sm.Size {
		if err := obj.f.Truncate(int64(sm.Size)); err != nil {
			return nil, fmt.Errorf("shared memory object %d (%s): resize to %d: %w", sm.Object, obj.path, sm.Size, err)
		}
		obj.size = sm.Size
	}
	return obj, nil
}

// traceeFd returns the descriptor of obj in the process of thread t, which
// opens it (as /proc/REWIND/fd/N) if it has none.
func (s *Session) traceeFd(t *rthread, obj *sharedObj) (int, error) {
	if fd, ok := obj.fds[t.proc.real]; ok {
		return fd, nil
	}
	path := append([]byte(fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), obj.f.Fd())), 0)
	cwd := int64(unix.AT_FDCWD)
	ret, err := s.injectWithString(t, path, func(addr uint64) (int64, error) {
		return ptrace.InjectSyscall(t.real, t.proc.mem, unix.SYS_OPENAT, uint64(cwd), addr, unix.O_RDWR|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return 0, fmt.Errorf("open shared memory object %d in the replay: %w", obj.id, err)
	}
	if ret < 0 {
		return 0, fmt.Errorf("open shared memory object %d in the replay: %w", obj.id, unix.Errno(-ret))
	}
	obj.fds[t.proc.real] = int(ret)
	return int(ret), nil
}

// sharedFd is traceeFd for the object of sm.
func (s *Session) sharedFd(t *rthread, sm *trace.SharedMap) (int, error) {
	obj, err := s.sharedObject(sm)
	if err != nil {
		return 0, err
	}
	return s.traceeFd(t, obj)
}

// injectWithString runs call with a copy of str in the memory of t's
// process: on its stack below the red zone, put back afterwards.
func (s *Session) injectWithString(t *rthread, str []byte, call func(addr uint64) (int64, error)) (int64, error) {
	var regs trace.Regs
	if err := ptrace.GetRegs(t.real, &regs); err != nil {
		return 0, err
	}
	addr := (regs[trace.RSP] - redZone - uint64(len(str)) - 64) &^ 15
	saved := make([]byte, len(str))
	if _, err := t.proc.mem.ReadAt(saved, addr); err != nil {
		// The stack ends there (a small thread stack): borrow a page.
		return s.injectWithScratch(t, str, call)
	}
	if _, err := t.proc.mem.WriteAt(str, addr); err != nil {
		return 0, err
	}
	ret, err := call(addr)
	if _, werr := t.proc.mem.WriteAt(saved, addr); werr != nil && err == nil {
		err = werr
	}
	return ret, err
}

// injectWithScratch runs call with str in a page mapped for the time of the
// call in t's process.
func (s *Session) injectWithScratch(t *rthread, str []byte, call func(addr uint64) (int64, error)) (int64, error) {
	size := (uint64(len(str)) + pageSize - 1) &^ (pageSize - 1)
	anon := int64(-1)
	addr, err := ptrace.InjectSyscall(t.real, t.proc.mem, unix.SYS_MMAP, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS, uint64(anon), 0)
	if err != nil {
		return 0, err
	}
	if addr < 0 && addr >= -4095 {
		return 0, fmt.Errorf("map a scratch page: %w", unix.Errno(-addr))
	}
	ret, err := func() (int64, error) {
		if _, err := t.proc.mem.WriteAt(str, uint64(addr)); err != nil {
			return 0, err
		}
		return call(uint64(addr))
	}()
	if _, uerr := ptrace.InjectSyscall(t.real, t.proc.mem, unix.SYS_MUNMAP, uint64(addr), size); uerr != nil && err == nil {
		err = uerr
	}
	return ret, err
}

// execShared forgets the descriptors of the process that exec'd (they are
// close-on-exec).
func (s *Session) execShared(p *rproc) {
	for _, obj := range s.sh.objs {
		delete(obj.fds, p.real)
	}
}

// mapShared turns a recorded mmap of a shared object into a mapping of
// replay's copy at the recorded address (regs are the call's, about to be
// executed again).
func (s *Session) mapShared(t *rthread, e *trace.Event, regs *trace.Regs) error {
	fd, err := s.sharedFd(t, e.Shared)
	if err != nil {
		return err
	}
	flags := regs[trace.R10]
	flags &^= mapSharedValidate | unix.MAP_ANONYMOUS | unix.MAP_HUGETLB | mapHugeMask | mapSync | unix.MAP_GROWSDOWN
	flags |= unix.MAP_SHARED
	if flags&unix.MAP_FIXED == 0 {
		flags |= mapFixedNoReplace
	}
	addr := e.ExitRegs[trace.RAX]
	regs[trace.RDI], regs[trace.R10], regs[trace.R8], regs[trace.R9] = addr, flags, uint64(fd), e.Shared.Offset
	s.noteSharedMapping(addr, regs[trace.RSI], e.Shared)
	return nil
}

// noteSharedMapping names a shared mapping for Mappings.
func (s *Session) noteSharedMapping(addr, length uint64, sm *trace.SharedMap) {
	s.fileMaps.add(Mapping{Start: addr, End: pageEnd(addr, length), Offset: sm.Offset, Path: sm.Path})
	if s.onMapping != nil {
		s.onMapping()
	}
}

// sysvShared turns shmat into an mmap of replay's copy of the segment, and
// shmdt into an munmap of it (regs are the call's, about to be executed
// again: its number is changed).
func (s *Session) sysvShared(t *rthread, e *trace.Event, regs *trace.Regs) error {
	if e.Shared == nil {
		return s.diverge(e, "%s without its shared memory object in the recording", syscalls.Name(int(e.Syscall)))
	}
	addr := e.ExitRegs[trace.RAX]
	length := (e.Shared.Size + pageSize - 1) &^ (pageSize - 1)
	if int64(e.Syscall) == unix.SYS_SHMDT {
		regs[trace.OrigRAX], regs[trace.RSI] = unix.SYS_MUNMAP, length
		return nil
	}
	fd, err := s.sharedFd(t, e.Shared)
	if err != nil {
		return err
	}
	shmflg := regs[trace.RDX]
	prot := uint64(unix.PROT_READ | unix.PROT_WRITE)
	if shmflg&shmRdonly != 0 {
		prot = unix.PROT_READ
	}
	if shmflg&shmExec != 0 {
		prot |= unix.PROT_EXEC
	}
	flags := uint64(unix.MAP_SHARED | mapFixedNoReplace)
	if shmflg&shmRemap != 0 {
		flags = unix.MAP_SHARED | unix.MAP_FIXED
	}
	regs[trace.OrigRAX] = unix.SYS_MMAP
	regs[trace.RDI], regs[trace.RSI], regs[trace.RDX], regs[trace.R10], regs[trace.R8], regs[trace.R9] = addr, length, prot, flags, uint64(fd), 0
	s.noteSharedMapping(addr, length, e.Shared)
	return nil
}

// applySharedMem writes what the recording saw change in a shared object.
func (s *Session) applySharedMem(t *rthread, e *trace.Event) error {
	if e.Shared == nil {
		// Another process of the recording wrote t's memory
		// (/proc/PID/mem, process_vm_writev: the recorder's procmem.go).
		return s.writeMem(t, e.Mem)
	}
	obj, err := s.sharedObject(e.Shared)
	if err != nil {
		return err
	}
	for _, m := range e.Mem {
		if _, err := obj.f.WriteAt(m.Data, int64(m.Addr)); err != nil {
			return fmt.Errorf("shared memory object %d (%s): write %d bytes at %#x: %w", obj.id, obj.path, len(m.Data), m.Addr, err)
		}
	}
	// A page written whole may reach past the end of the file.
	if err := obj.f.Truncate(int64(obj.size)); err != nil {
		return fmt.Errorf("shared memory object %d (%s): %w", obj.id, obj.path, err)
	}
	return nil
}

// noteAdvice remembers that the program used advice a checkpoint's clone
// must not inherit.
func (s *Session) noteAdvice(advice uint64) {
	if a := int32(advice); a == madvWipeonfork || a == madvDontfork {
		s.sh.forkAdvice = true
	}
}

// sharedSave is one object's state at a checkpoint.
type sharedSave struct {
	obj   *sharedObj
	size  uint64
	data  []byte
	fd    int
	hasFd bool
}

// saveShared saves the objects for a checkpoint of the process, and
// returns how many bytes it had to copy.
func (s *Session) saveShared() ([]sharedSave, int64, error) {
	var out []sharedSave
	var copied int64
	for _, obj := range s.sh.objs {
		data := make([]byte, obj.size)
		if _, err := obj.f.ReadAt(data, 0); err != nil && obj.size > 0 {
			return nil, 0, fmt.Errorf("save shared memory object %d (%s): %w", obj.id, obj.path, err)
		}
		if bytes.Equal(data, obj.saved) {
			data = obj.saved
		} else {
			obj.saved = data
			copied += int64(len(data))
		}
		fd, ok := obj.fds[s.pid]
		out = append(out, sharedSave{obj: obj, size: obj.size, data: data, fd: fd, hasFd: ok})
	}
	return out, copied, nil
}

// restoreShared puts the objects back as a checkpoint saved them, for the
// process pid restored from it; objects made since are dropped.
func (s *Session) restoreShared(saved []sharedSave, pid int) error {
	s.sh.objs = map[uint32]*sharedObj{}
	for _, sv := range saved {
		obj := sv.obj
		if err := obj.f.Truncate(int64(sv.size)); err != nil {
			return fmt.Errorf("restore shared memory object %d (%s): %w", obj.id, obj.path, err)
		}
		if _, err := obj.f.WriteAt(sv.data, 0); err != nil {
			return fmt.Errorf("restore shared memory object %d (%s): %w", obj.id, obj.path, err)
		}
		obj.size = sv.size
		obj.fds = map[int]int{}
		if sv.hasFd {
			obj.fds[pid] = sv.fd
		}
		s.sh.objs[obj.id] = obj
	}
	return nil
}

// forkCopy is ptrace.ForkCopy for a process that may have memory marked
// MADV_WIPEONFORK (the copy would see zeros) or MADV_DONTFORK (the copy
// would not have it): the marks are taken off for the time of the clone
// and put back in both processes, so that the copy is the process as it is
// and can itself be copied the same way.
func forkCopy(pid, tid int, m *ptrace.Mem, advice bool) (int, error) {
	if !advice {
		return ptrace.ForkCopy(tid, m)
	}
	marked, err := forkMarked(pid)
	if err != nil {
		return 0, err
	}
	mark := func(tid int, m *ptrace.Mem, on bool) error {
		for _, r := range marked {
			adv := r.advice
			if !on {
				adv = map[int]int{madvWipeonfork: madvKeeponfork, madvDontfork: madvDofork}[adv]
			}
			ret, err := ptrace.InjectSyscall(tid, m, unix.SYS_MADVISE, r.start, r.end-r.start, uint64(adv))
			if err != nil {
				return err
			}
			if ret < 0 {
				return fmt.Errorf("madvise %#x-%#x, %d: %w", r.start, r.end, adv, unix.Errno(-ret))
			}
		}
		return nil
	}
	if err := mark(tid, m, false); err != nil {
		return 0, fmt.Errorf("copy a process with fork advice: %w", err)
	}
	child, err := ptrace.ForkCopy(tid, m)
	if rerr := mark(tid, m, true); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil {
		return 0, err
	}
	cm, err := ptrace.OpenMem(child)
	if err != nil {
		return 0, err
	}
	defer cm.Close()
	if err := mark(child, cm, true); err != nil {
		unix.Kill(child, unix.SIGKILL)
		return 0, fmt.Errorf("copy a process with fork advice: %w", err)
	}
	return child, nil
}

// markedRange is memory with fork advice on it.
type markedRange struct {
	start, end uint64
	advice     int
}

// forkMarked lists the memory of pid marked wipe-on-fork ("wf") or
// do-not-copy ("dc") in /proc/PID/smaps.
func forkMarked(pid int) ([]markedRange, error) {
	maps, err := ptrace.ReadSmaps(pid)
	if err != nil {
		return nil, err
	}
	var out []markedRange
	for _, m := range maps {
		for _, fl := range m.Flags {
			switch fl {
			case "wf":
				out = append(out, markedRange{m.Start, m.End, madvWipeonfork})
			case "dc":
				out = append(out, markedRange{m.Start, m.End, madvDontfork})
			}
		}
	}
	return out, nil
}
