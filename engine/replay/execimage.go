package replay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/machine"
	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Exec images (trace.Image). Where the files an exec mapped are not, on
// this machine, the ones the recording stored (another machine, a loader
// updated since, a build output deleted), the kernel cannot be left to
// exec them: replay execs a vessel instead (ptrace.VesselPath, a tiny
// static program), and at its exec, before one instruction of it runs,
// rebuilds the image the recording's exec left from the trace: the files'
// stored copies mapped where they were, the stack and the vDSO as the
// kernel wrote them, the kernel's layout. From there the exec goes on as
// any: the vDSO and the code patched, the hook mapped at the execve's exit.

// FromTraceEnv, set to 1, makes replay rebuild every exec from the trace,
// and take every file the program maps (and the debugger its symbols) from
// the trace's copies, even where the local files are the recorded ones:
// what a replay on another machine does, checked on this one.
const FromTraceEnv = "REWIND_REPLAY_FROM_TRACE"

// atFDCWD32 is AT_FDCWD as the low 32 bits of a descriptor argument.
const atFDCWD32 = -100

// storedMemfd is the name of the memfds of stored files (storedFile), and
// memfdPrefix how /proc/PID/maps shows it.
const (
	storedMemfd = "rewind-file-"
	memfdPrefix = "/memfd:" + storedMemfd
)

// rebuildFor says whether exec event e must be rebuilt from the trace, and
// returns its image then (nil: the kernel execs the local files). With
// need, it must be where the trace has the image.
func (s *Session) rebuildFor(e *trace.Event, need bool) (*trace.Image, error) {
	im, err := trace.DecodeImage(e)
	if err != nil || im == nil {
		return nil, err
	}
	return s.rebuildImage(im, need)
}

// rebuildImage is rebuildFor of a decoded image.
func (s *Session) rebuildImage(im *trace.Image, need bool) (*trace.Image, error) {
	need = need || s.fromTrace || s.otherVDSO()
	for i := range im.Regions {
		if st := im.Regions[i].Stored; st != nil && !need {
			need = !s.unchanged(st)
		}
	}
	if !need {
		return nil, nil
	}
	if im.Missing != "" {
		return nil, fmt.Errorf("replay: the recording could not store what an exec mapped (%s), and this machine's files differ", im.Missing)
	}
	if ptrace.VesselPath() == "" {
		return nil, errors.New("replay: the files an exec mapped differ here, and this kernel cannot make the memfd that replay rebuilds the process from")
	}
	return im, nil
}

// execVessel makes the execve t is about to make again (call c, whose
// registers are regs) exec the vessel: the process's image is rebuilt at
// the exec stop (rebuildExec).
func (s *Session) execVessel(t *rthread, regs *trace.Regs, c syscalls.Call) error {
	path := append([]byte(ptrace.VesselPath()), 0)
	addr := (regs[trace.RSP] - redZone - uint64(len(path)) - 64) &^ 15
	// What lies below the stack pointer goes with the exec.
	if _, err := t.proc.mem.WriteAt(path, addr); err != nil {
		return fmt.Errorf("exec the image from the recording: write the vessel's path: %w", err)
	}
	if c.Nr == unix.SYS_EXECVEAT {
		regs[trace.RDI] = uint64(atFDCWD)
		regs[trace.RSI] = addr
		regs[trace.R8] = 0
		return nil
	}
	regs[trace.RDI] = addr
	return nil
}

// rebuildExec turns the vessel t's process exec'd (t at its exec stop)
// into the image of exec event e, and leaves t at the execve's exit with
// the registers the recording's exec left (atExecExit).
func (s *Session) rebuildExec(t *rthread, e *trace.Event, im *trace.Image) error {
	b := &builder{s: s, t: t, m: t.proc.mem, snap: &trace.Snapshot{Regions: im.Regions, Layout: im.Layout}}
	// Out of the execve first: calls are injected from its exit stop.
	if err := ptrace.Syscall(t.real, 0); err != nil {
		return err
	}
	if st, err := s.waitFor(t); err != nil || st.Kind != ptrace.StopSyscall {
		return fmt.Errorf("the end of the vessel's execve: %v %v", describe(st), err)
	}
	if err := b.openScratch(); err != nil {
		return err
	}
	if err := b.clear(); err != nil {
		return err
	}
	for i := range im.Regions {
		if err := b.mapImageRegion(&im.Regions[i]); err != nil {
			return fmt.Errorf("rebuild the exec's image: %w", err)
		}
	}
	var err error
	if b.auxv, err = stackAuxv(b.m, e.Regs[trace.RSP]); err != nil {
		return fmt.Errorf("rebuild the exec's image: %w", err)
	}
	if err := b.setLayout(); err != nil {
		return err
	}
	if im.Comm != "" {
		// The name exec gave it (thread names: info threads, gdb).
		if ret, err := b.call(unix.SYS_PRCTL, unix.PR_SET_NAME, b.str(im.Comm)); err != nil || ret < 0 {
			return fmt.Errorf("name the process %q: %v %v", im.Comm, err, unix.Errno(-ret))
		}
	}
	for _, r := range im.Regions {
		if r.Stored != nil && r.Stored.Path == im.Exe && r.Offset == 0 {
			t.proc.exe = &rebuiltExe{base: r.Start, blob: r.Stored.Blob}
			break
		}
	}
	if err := ptrace.SetRegs(t.real, &e.Regs); err != nil {
		return err
	}
	// The call puts the registers back.
	if ret, err := ptrace.InjectSyscall(t.real, b.m, unix.SYS_MUNMAP, b.scratch, scratchSize); err != nil || ret < 0 {
		return fmt.Errorf("unmap the scratch page: %v %v", err, unix.Errno(-ret))
	}
	t.atExecExit = true
	return nil
}

// mapImageRegion maps one region of an exec's image at its address: a
// file's from the stored copy (the file itself where it is the one
// recorded), the rest anonymous, then the bytes the image holds over it.
func (b *builder) mapImageRegion(r *trace.Region) error {
	if r.Skipped != "" || r.Size == 0 {
		return nil
	}
	prot := patch.Prot(r.Perms)
	flags := uint64(unix.MAP_PRIVATE | unix.MAP_FIXED)
	fd, off := ^uint64(0), uint64(0)
	var whole []byte // the stored file, where no descriptor can hold it
	if r.Stored != nil {
		f, err := b.s.storedFile(r.Stored)
		if err != nil {
			return err
		}
		if f != nil {
			ret, err := b.call(unix.SYS_OPENAT, atFDCWD, b.str(fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), f.Fd())), unix.O_RDONLY|unix.O_CLOEXEC)
			if err != nil {
				return err
			}
			if ret < 0 {
				return fmt.Errorf("open the stored copy of %s: %w", r.Stored.Path, unix.Errno(-ret))
			}
			fd, off = uint64(ret), r.Offset
			defer b.call(unix.SYS_CLOSE, fd)
		} else if whole, err = b.s.blob(r.Stored.Blob); err != nil {
			return err
		}
	}
	if fd == ^uint64(0) {
		flags |= unix.MAP_ANONYMOUS
		if r.Path == "[stack]" {
			flags |= unix.MAP_GROWSDOWN
		}
	}
	ret, err := b.call(unix.SYS_MMAP, r.Start, r.Size, uint64(prot), flags, fd, off)
	if err != nil {
		return err
	}
	if uint64(ret) != r.Start {
		return fmt.Errorf("map %#x-%#x %s: %v", r.Start, r.End(), r.Path, unix.Errno(-ret))
	}
	if r.Path != "" && b.t.proc == b.s.main {
		// The kernel sees a memfd or anonymous memory: say what it stands for.
		b.s.fileMaps.add(Mapping{Start: r.Start, End: r.End(), Offset: r.Offset, Path: r.Path})
	}
	if whole != nil && r.Offset < uint64(len(whole)) {
		data := whole[r.Offset:min(uint64(len(whole)), r.Offset+r.Size)]
		if _, err := b.m.WriteAt(data, r.Start); err != nil {
			return fmt.Errorf("%s: write the stored bytes: %w", r.Path, err)
		}
	}
	if len(r.Blobs) > 0 {
		return b.fill(r, func(data []byte, off uint64) error {
			_, err := b.m.WriteAt(data, r.Start+off)
			return err
		})
	}
	return nil
}

// storedBlobOf returns the blob a memfd of a stored file holds, from its
// name in /proc/PID/maps.
func storedBlobOf(path string) (uint32, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSuffix(path, " (deleted)"), memfdPrefix)
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseUint(rest, 10, 32)
	return uint32(id), err == nil
}

// rebuiltExe is the executable of an image rebuilt from the trace: the
// blob of its stored copy, mapped from base.
type rebuiltExe struct {
	base uint64
	blob uint32
	key  string // its content's name, for ptrace's cache of images
}

// dataRanges is ptrace.DataRanges of t's process, whose executable, where
// its image was rebuilt, is the trace's copy rather than /proc/PID/exe's
// (the vessel).
func (s *Session) dataRanges(t *rthread) ([]ptrace.Range, error) {
	x := t.proc.exe
	if x == nil {
		return ptrace.DataRanges(t.real)
	}
	data, err := s.blob(x.blob)
	if err != nil {
		return nil, err
	}
	if x.key == "" {
		x.key = s.blobName(x.blob)
	}
	return ptrace.DataRangesAt(t.real, x.base, "blob:"+x.key, data)
}

// maxAuxv bounds the auxiliary vector read from a stack: the kernel's copy
// holds at most 50 words (AT_VECTOR_SIZE on x86-64).
const maxAuxv = 50 * 8

// stackAuxv reads the auxiliary vector an exec left on the stack at sp
// (argc, argv and envp with their NULLs, then the vector, AT_NULL
// included).
func stackAuxv(m *ptrace.Mem, sp uint64) ([]byte, error) {
	word := func(at uint64) (uint64, error) {
		var b [8]byte
		if _, err := m.ReadAt(b[:], at); err != nil {
			return 0, fmt.Errorf("read the initial stack at %#x: %w", at, err)
		}
		return binary.LittleEndian.Uint64(b[:]), nil
	}
	argc, err := word(sp)
	if err != nil {
		return nil, err
	}
	at := sp + 8*(argc+2) // past argv's NULL
	for {
		v, err := word(at)
		if err != nil {
			return nil, err
		}
		at += 8
		if v == 0 {
			break
		}
	}
	var out []byte
	for len(out) < maxAuxv {
		k, err := word(at)
		if err != nil {
			return nil, err
		}
		v, err := word(at + 8)
		if err != nil {
			return nil, err
		}
		out = binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(out, k), v)
		at += 16
		if k == 0 {
			return out, nil
		}
	}
	return nil, errors.New("the initial stack's auxiliary vector has no end")
}

// execsImage says whether the exec call c that t is about to make again
// runs, here, the executable the recording's exec left (image im): not
// a script whose file is gone or was not the one recorded (the kernel
// reads a #! script, which the trace does not hold, to find its
// interpreter: the image is rebuilt instead), nor a path that is not there.
func (s *Session) execsImage(t *rthread, c syscalls.Call, im *trace.Image) bool {
	arg := c.Args[0]
	if c.Nr == unix.SYS_EXECVEAT {
		if int32(c.Args[0]) != atFDCWD32 {
			return true // through a descriptor (execfd.go)
		}
		arg = c.Args[1]
	}
	path, err := t.proc.mem.ReadString(arg, unix.PathMax)
	if err != nil {
		return false
	}
	p := string(path)
	if !filepath.IsAbs(p) {
		p = filepath.Join(fmt.Sprintf("/proc/%d/cwd", t.proc.real), p)
	}
	var a, b unix.Stat_t
	if unix.Stat(p, &a) != nil || unix.Stat(im.Exe, &b) != nil {
		return false
	}
	return a.Dev == b.Dev && a.Ino == b.Ino
}

// otherVDSO says whether this kernel's vDSO is not the recording's: the
// program's calls into it would run other code at other addresses, so
// every exec is rebuilt with the recorded one.
func (s *Session) otherVDSO() bool {
	s.vdsoOnce.Do(func() {
		if rec := s.hdr.VDSO; rec != nil {
			cur := machine.VDSO()
			s.vdsoDiffers = cur == nil || cur.SHA256 != rec.SHA256
		}
	})
	return s.vdsoDiffers
}
