package replay

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// A trace of a process rewind attached to (rewind record -p) starts with a
// snapshot instead of an exec. Replay launches the recorded executable as
// usual, and at its exec stop, before the program runs a single
// instruction, turns it into the snapshot: everything the exec mapped goes,
// each region comes back at its address with its bytes, the kernel's view
// of the layout (brk) is set, the handlers are installed, and the threads
// are re-created with their registers, masks and stacks.

// Layout of the scratch mapping the rebuild runs its calls from: the
// syscall instruction at its start, data after the first page, the stack at
// its top (the exec's own stack is unmapped with everything else).
const (
	scratchSize = 4 * pageSize
	scratchData = pageSize
)

// Linux constants the rebuild needs.
const (
	prSetMM        = 35
	prSetMMMap     = 14
	prctlMMMapSize = 104         // sizeof(struct prctl_mm_map)
	atFDCWD        = ^uint64(99) // AT_FDCWD, -100
)

// rebuild turns the launched process (its main thread t at its exec stop)
// into the snapshot of event e.
func (s *Session) applySnapshot(t *rthread, e *trace.Event) error {
	if !t.atExec || s.next != 0 {
		return s.diverge(e, "a snapshot can only start a recording")
	}
	snap := s.snap // decoded by launch
	if snap == nil {
		var err error
		if snap, err = trace.DecodeSnapshot(e); err != nil {
			return err
		}
	}
	t.atExec = false
	b := &builder{s: s, t: t, m: t.proc.mem, snap: snap}
	s.snap = nil
	if err := b.build(); err != nil {
		return fmt.Errorf("rebuild the process attached to: %w", err)
	}
	return nil
}

// builder rebuilds one snapshot.
type builder struct {
	s       *Session
	t       *rthread
	m       *ptrace.Mem
	snap    *trace.Snapshot
	scratch uint64
	// auxv, when set, becomes the kernel's copy of the auxiliary vector
	// (/proc/PID/auxv, which gdb reads), the vessel's otherwise.
	auxv []byte
}

func (b *builder) build() error {
	// Out of the execve first: calls are injected from its exit stop.
	if err := ptrace.Syscall(b.t.real, 0); err != nil {
		return err
	}
	if st, err := b.s.waitFor(b.t); err != nil || st.Kind != ptrace.StopSyscall {
		return fmt.Errorf("the end of the launcher's execve: %v %v", describe(st), err)
	}
	if err := b.openScratch(); err != nil {
		return err
	}
	if err := b.clear(); err != nil {
		return err
	}
	for i := range b.snap.Regions {
		if err := b.mapRegion(&b.snap.Regions[i]); err != nil {
			return err
		}
	}
	if err := b.setLayout(); err != nil {
		return err
	}
	if err := b.setHandlers(); err != nil {
		return err
	}
	b.setLimits()
	if b.snap.Cwd != "" {
		b.call(unix.SYS_CHDIR, b.str(b.snap.Cwd)) // best effort: the files come from the trace
	}
	if err := ptrace.TrapInstructions(b.t.real, b.m, true, b.s.trapsCpuid()); err != nil {
		return err
	}
	if b.s.hdr.Hook != "" && b.holdsHook() {
		if err := hook.Reset(b.m, hook.ModeReplay); err != nil {
			return err
		}
		b.t.proc.hooked = true
	}
	// The other threads first: they are cloned from the main thread while
	// it still runs from the scratch page.
	for i := 1; i < len(b.snap.Threads); i++ {
		st := &b.snap.Threads[i]
		real, err := ptrace.AddThread(b.t.real, b.m, st)
		if err != nil {
			return fmt.Errorf("thread %d: %w", st.Tid, err)
		}
		b.s.threads[int32(st.Tid)] = &rthread{rec: int32(st.Tid), real: real, proc: b.t.proc}
	}
	if err := b.patch(); err != nil {
		return err
	}
	// The main thread last: its registers leave the scratch page, which
	// then goes with a call made where the thread now stands (the call
	// puts its registers back).
	if err := ptrace.RestoreThread(b.t.real, b.m, &b.snap.Threads[0]); err != nil {
		return err
	}
	if ret, err := ptrace.InjectSyscall(b.t.real, b.m, unix.SYS_MUNMAP, b.scratch, scratchSize); err != nil || ret < 0 {
		return fmt.Errorf("unmap the scratch page: %v %v", err, unix.Errno(-ret))
	}
	return nil
}

// holdsHook says whether the snapshot has the hook page (a ring buffer's
// segment of a recording made with buffering).
func (b *builder) holdsHook() bool {
	for _, r := range b.snap.Regions {
		if r.Start <= hook.Ctl && hook.Ctl < r.Start+r.Size {
			return true
		}
	}
	return false
}

// openScratch maps the scratch page where neither the exec nor the
// snapshot has anything, and moves the main thread there.
func (b *builder) openScratch() error {
	maps, err := ptrace.ReadMaps(b.t.real)
	if err != nil {
		return err
	}
	taken := func(a uint64) bool {
		for _, r := range b.snap.Regions {
			if a < r.End() && a+scratchSize > r.Start {
				return true
			}
		}
		for _, m := range maps {
			if a < m.End && a+scratchSize > m.Start {
				return true
			}
		}
		return false
	}
	addr := uint64(0x10000000)
	for ; taken(addr); addr += 1 << 24 {
		if addr >= 1<<46 {
			return errors.New("no room for the scratch page")
		}
	}
	ret, err := ptrace.InjectSyscall(b.t.real, b.m, unix.SYS_MMAP, addr, scratchSize,
		unix.PROT_READ|unix.PROT_WRITE|unix.PROT_EXEC, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|mapFixedNoReplace, ^uint64(0), 0)
	if err != nil {
		return err
	}
	if uint64(ret) != addr {
		return fmt.Errorf("map the scratch page at %#x: %v", addr, unix.Errno(-ret))
	}
	b.scratch = addr
	var regs trace.Regs
	if err := ptrace.GetRegs(b.t.real, &regs); err != nil {
		return err
	}
	regs[trace.RIP] = addr
	regs[trace.RSP] = addr + scratchSize - 64
	return ptrace.SetRegs(b.t.real, &regs)
}

// clear unmaps everything the exec mapped but the scratch page (and the
// vsyscall page, which is the kernel's).
func (b *builder) clear() error {
	maps, err := ptrace.ReadMaps(b.t.real)
	if err != nil {
		return err
	}
	for _, m := range maps {
		if m.Start == b.scratch || m.Path == "[vsyscall]" {
			continue
		}
		if ret, err := b.call(unix.SYS_MUNMAP, m.Start, m.End-m.Start); err != nil || ret < 0 {
			return fmt.Errorf("unmap %#x-%#x %s: %v %v", m.Start, m.End, m.Path, err, unix.Errno(-ret))
		}
	}
	return nil
}

// call makes a system call in the main thread.
func (b *builder) call(nr uint64, args ...uint64) (int64, error) {
	return ptrace.InjectSyscall(b.t.real, b.m, nr, args...)
}

// str writes a NUL-terminated string into the scratch data and returns its
// address.
func (b *builder) str(v string) uint64 {
	addr := b.scratch + scratchData
	b.m.WriteAt(append([]byte(v), 0), addr)
	return addr
}

// mapRegion maps one region at its address with its bytes.
func (b *builder) mapRegion(r *trace.Region) error {
	if r.Skipped != "" || r.Size == 0 {
		return nil
	}
	if r.Object != nil {
		return b.mapShared(r)
	}
	prot := patch.Prot(r.Perms)
	flags := uint64(unix.MAP_PRIVATE | unix.MAP_FIXED)
	fd := ^uint64(0)
	fromFile := false
	if strings.HasPrefix(r.Path, "/") && !strings.HasSuffix(r.Path, " (deleted)") && len(r.Path) < scratchSize-scratchData-1 {
		ret, err := b.call(unix.SYS_OPENAT, atFDCWD, b.str(r.Path), unix.O_RDONLY|unix.O_CLOEXEC)
		if err != nil {
			return err
		}
		if ret >= 0 {
			fd, fromFile = uint64(ret), true
			defer b.call(unix.SYS_CLOSE, fd)
		}
	}
	if !fromFile {
		if r.File != nil {
			return fmt.Errorf("region %#x-%#x: %s is needed (mapped from the file when recorded)", r.Start, r.End(), r.File.Path)
		}
		flags |= unix.MAP_ANONYMOUS
		if r.Path == "[stack]" {
			flags |= unix.MAP_GROWSDOWN
		}
	}
	off := r.Offset
	if !fromFile {
		off = 0
	}
	ret, err := b.call(unix.SYS_MMAP, r.Start, r.Size, uint64(prot), flags, fd, off)
	if err != nil {
		return err
	}
	if uint64(ret) != r.Start {
		return fmt.Errorf("map region %#x-%#x %s: %v", r.Start, r.End(), r.Path, unix.Errno(-ret))
	}
	if !fromFile && r.Path != "" {
		// The kernel sees anonymous memory: say what it stands for.
		b.s.fileMaps.add(Mapping{Start: r.Start, End: r.End(), Offset: r.Offset, Path: r.Path})
	}
	switch {
	case r.File != nil:
		got := make([]byte, r.Size)
		if _, err := b.m.ReadAt(got, r.Start); err != nil {
			return fmt.Errorf("region %#x-%#x: %w", r.Start, r.End(), err)
		}
		if sha256.Sum256(got) != r.File.SHA256 {
			return fmt.Errorf("%s changed since it was recorded (its bytes at offset %#x differ); replay needs the same file", r.File.Path, r.File.Offset)
		}
	case len(r.Blobs) > 0:
		return b.fill(r, func(data []byte, off uint64) error {
			_, err := b.m.WriteAt(data, r.Start+off)
			return err
		})
	}
	return nil
}

// mapShared maps replay's copy of a shared region's object (shared.go) at
// its address, and fills the region's part of it.
func (b *builder) mapShared(r *trace.Region) error {
	obj, err := b.s.sharedObject(r.Object)
	if err != nil {
		return err
	}
	fd, err := b.s.traceeFd(b.t, obj)
	if err != nil {
		return err
	}
	ret, err := b.call(unix.SYS_MMAP, r.Start, r.Size, uint64(patch.Prot(r.Perms)), unix.MAP_SHARED|unix.MAP_FIXED, uint64(fd), r.Object.Offset)
	if err != nil {
		return err
	}
	if uint64(ret) != r.Start {
		return fmt.Errorf("map shared region %#x-%#x %s: %v", r.Start, r.End(), r.Path, unix.Errno(-ret))
	}
	b.s.noteSharedMapping(r.Start, r.Size, r.Object)
	// Through rewind's own descriptor: a read-only shared mapping
	// cannot be written through the process's memory.
	return b.fill(r, func(data []byte, off uint64) error {
		_, err := obj.f.WriteAt(data, int64(r.Object.Offset+off))
		return err
	})
}

// fill writes a region's bytes, from its blobs, where its runs say, with
// write (off is from the region's start).
func (b *builder) fill(r *trace.Region, write func(data []byte, off uint64) error) error {
	runs := r.Runs
	if runs == nil {
		runs = []trace.Run{{Off: 0, Len: r.Size}}
	}
	var data []byte
	blobs := r.Blobs
	for _, run := range runs {
		for at := uint64(0); at < run.Len; {
			if len(data) == 0 {
				if len(blobs) == 0 {
					return fmt.Errorf("region %#x-%#x: its blobs end before its runs", r.Start, r.End())
				}
				var err error
				if data, err = b.s.rd.Blob(blobs[0]); err != nil { // not cached: read once
					return fmt.Errorf("region %#x-%#x: %w", r.Start, r.End(), err)
				}
				blobs = blobs[1:]
			}
			n := min(uint64(len(data)), run.Len-at)
			if err := write(data[:n], run.Off+at); err != nil {
				return fmt.Errorf("region %#x-%#x: write its bytes: %w", r.Start, r.End(), err)
			}
			data, at = data[n:], at+n
		}
	}
	return nil
}

// setLayout gives the kernel the recorded layout (PR_SET_MM_MAP): brk
// calls, which replay executes again, then move the break from where the
// recording's did.
func (b *builder) setLayout() error {
	l := b.snap.Layout
	addr := b.scratch + scratchData
	auxvAt := uint64(0)
	if len(b.auxv) > 0 {
		auxvAt = addr + prctlMMMapSize
		if _, err := b.m.WriteAt(b.auxv, auxvAt); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	for _, v := range []uint64{l.StartCode, l.EndCode, l.StartData, l.EndData, l.StartBrk, l.Brk,
		l.StartStack, l.ArgStart, l.ArgEnd, l.EnvStart, l.EnvEnd, auxvAt} {
		binary.Write(&buf, binary.LittleEndian, v)
	}
	binary.Write(&buf, binary.LittleEndian, uint32(len(b.auxv))) // auxv_size: 0 keeps the kernel's
	binary.Write(&buf, binary.LittleEndian, uint32(0xffffffff))  // exe_fd: keep the executable
	if _, err := b.m.WriteAt(buf.Bytes(), addr); err != nil {
		return err
	}
	ret, err := b.call(unix.SYS_PRCTL, prSetMM, prSetMMMap, addr, prctlMMMapSize, 0)
	if err != nil {
		return err
	}
	if ret < 0 {
		return fmt.Errorf("set the address space layout (prctl PR_SET_MM_MAP, which needs CONFIG_CHECKPOINT_RESTORE): %w", unix.Errno(-ret))
	}
	return nil
}

// setHandlers installs every signal's recorded action.
func (b *builder) setHandlers() error {
	addr := b.scratch + scratchData
	for _, a := range b.snap.Handlers {
		if a.Handler == 0 || a.Sig == int(unix.SIGKILL) || a.Sig == int(unix.SIGSTOP) {
			continue
		}
		var act [32]byte
		binary.LittleEndian.PutUint64(act[0:], a.Handler)
		binary.LittleEndian.PutUint64(act[8:], a.Flags)
		binary.LittleEndian.PutUint64(act[16:], a.Restorer)
		binary.LittleEndian.PutUint64(act[24:], a.Mask)
		if _, err := b.m.WriteAt(act[:], addr); err != nil {
			return err
		}
		ret, err := b.call(unix.SYS_RT_SIGACTION, uint64(a.Sig), addr, 0, 8)
		if err != nil {
			return err
		}
		if ret < 0 {
			return fmt.Errorf("install the action of signal %d: %w", a.Sig, unix.Errno(-ret))
		}
	}
	return nil
}

// setLimits applies the recorded resource limits, as far as this process
// may (a hard limit above rewind's own cannot be raised).
func (b *builder) setLimits() {
	for _, l := range b.snap.Rlimits {
		lim := unix.Rlimit{Cur: l.Cur, Max: l.Max}
		unix.Prlimit(b.t.real, l.Resource, &lim, nil)
	}
}

// patch patches the vDSO and the code as the recorder did after it
// snapshotted the process (record/attach.go).
func (b *builder) patch() error {
	p := b.t.proc
	for _, r := range b.snap.Regions {
		if r.Path == "[vdso]" {
			if _, _, err := patch.PatchVDSO(b.m, r.Start); err != nil {
				return fmt.Errorf("patch the vDSO: %w", err)
			}
		}
	}
	if !b.s.patching() {
		return nil
	}
	p.code = &patch.Space{Cpuid: b.s.hdr.CpuidPatched, Xgetbv: b.s.hdr.Xgetbv}
	for _, mp := range patch.RegionMappings(b.snap.Regions, b.s.code.Path) {
		p.code.Map(b.m, mp)
	}
	return nil
}
