package hook

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	"golang.org/x/sys/cpu"
	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
)

// ErrNoCRC says the CPU lacks SSE4.2, whose crc32 instruction the hook
// page hashes the bytes of writes with.
var ErrNoCRC = errors.New("this CPU lacks SSE4.2, whose crc32 instruction the hook page hashes writes with")

// Usable says whether this CPU can run the hook page: nil, or ErrNoCRC.
func Usable() error {
	if !cpu.X86.HasSSE42 {
		return ErrNoCRC
	}
	return nil
}

// ID names the image: a trace records the one it was made with, and
// replay needs the same (the calls it replays are made by that code).
func ID() string {
	sum := sha256.Sum256(Image)
	return hex.EncodeToString(sum[:8])
}

// Install maps the hook page, with code img (Image, or for replay the
// image the trace names: ImageOf), into the process of thread tid, stopped
// at its exec (nothing of the program has run), with mode. The same calls in
// recording and replay give the same address space. The code goes first:
// its `syscall; int3` then serves the calls injected after it (the control
// page's mapping, and the caller's), each with one stop where the
// program's own code would take two under the filter.
func Install(tid int, m *ptrace.Mem, mode Mode, img []byte) error {
	maps := []struct {
		addr, size uint64
		prot       int
	}{
		{Base, CodeSize, unix.PROT_READ | unix.PROT_EXEC},
		{Ctl, Size - CodeSize, unix.PROT_READ | unix.PROT_WRITE},
	}
	for _, mp := range maps {
		got, err := ptrace.InjectSyscall(tid, m, unix.SYS_MMAP, mp.addr, mp.size, uint64(mp.prot),
			unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED_NOREPLACE, ^uint64(0), 0)
		if err != nil {
			return fmt.Errorf("map the hook page at %#x: %w", mp.addr, err)
		}
		if uint64(got) != mp.addr {
			return fmt.Errorf("map the hook page at %#x: %w", mp.addr, unix.Errno(-got))
		}
		if mp.addr == Base {
			if _, err := m.WriteAt(img, Base); err != nil {
				return fmt.Errorf("write the hook page: %w", err)
			}
		}
	}
	if _, err := m.WriteAt(binary.LittleEndian.AppendUint32(nil, uint32(mode)), CtlModeAddr); err != nil {
		return fmt.Errorf("write the hook page: %w", err)
	}
	return nil
}

// SetStreams tells the hook of a recorded process which files it leaves
// to the recorder: a write to one of the standard streams rewind passed
// (out and err, each a device and inode), whose bytes replay shows, or to
// procfs (procDev), whose /proc/PID/mem writes memory, is made traced.
func SetStreams(m *ptrace.Mem, out, err [2]uint64, procDev uint64) error {
	var b []byte
	for _, v := range []uint64{out[0], out[1], err[0], err[1], procDev} {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	if _, werr := m.WriteAt(b, Ctl+ctlStreams); werr != nil {
		return fmt.Errorf("write the hook page: %w", werr)
	}
	return nil
}

// SetShared tells the hook of a recorded process whether it maps memory
// shared that may change under it: its writes, truncations, unmappings and
// reads of pipes and sockets are then made traced, for the recorder to see
// what changes there.
func SetShared(m *ptrace.Mem, on bool) error {
	if on {
		return setFlag(m, flagShared)
	}
	return clearFlag(m, flagShared)
}

// MarkTscTrap tells the hook of a recorded process that a thread of it
// asked for its rdtsc to fault (PR_TSC_SIGSEGV): patched rdtsc sites trap,
// and the recorder gives that thread its SIGSEGV.
func MarkTscTrap(m *ptrace.Mem) error { return setFlag(m, flagTscTrap) }

// SharedMap is a shared mapping of a recorded process, as its hook knows
// it: unmapping or replacing [Start, End), or writing or truncating the
// file (Dev as stat gives it, Ino), is left to the recorder.
type SharedMap struct{ Start, End, Dev, Ino uint64 }

// SetSharedMaps gives the hook of a recorded process its shared mappings;
// past SharedMax, it leaves every unmapping, fixed mapping, and write or
// truncation of a file to the recorder.
func SetSharedMaps(m *ptrace.Mem, maps []SharedMap) error {
	n := uint64(len(maps))
	if n > SharedMax {
		maps = nil
	}
	var b []byte
	for _, s := range maps {
		for _, v := range []uint64{s.Start, s.End, s.Dev, s.Ino} {
			b = binary.LittleEndian.AppendUint64(b, v)
		}
	}
	if _, err := m.WriteAt(b, Ctl+ctlShared); err != nil {
		return fmt.Errorf("write the hook page: %w", err)
	}
	// The count last: a thread of the process may be reading the table.
	if _, err := m.WriteAt(binary.LittleEndian.AppendUint64(nil, n), Ctl+ctlNShared); err != nil {
		return fmt.Errorf("write the hook page: %w", err)
	}
	return nil
}

// SetRunFlags tells the hook of a recorded process how it runs beside the
// others (engine/record's sidebyside.go): wait, alone on a run queue, so
// that a read of a pipe or a socket may wait in the hook; stdTraced,
// beside other processes, so that writes to the standard streams are
// traced, in the order their bytes reached them.
func SetRunFlags(m *ptrace.Mem, wait, stdTraced bool) error {
	return changeFlags(m, func(v uint32) uint32 {
		v &^= flagWait | flagStdTraced
		if wait {
			v |= flagWait
		}
		if stdTraced {
			v |= flagStdTraced
		}
		return v
	})
}

// Waits says whether the hook may wait in call nr (SetRunFlags): read,
// recvfrom, write, sendto, poll, epoll_wait.
func Waits(nr uint64) bool {
	switch nr {
	case 0, 45, 1, 44, 7, 232:
		return true
	}
	return false
}

// Waiting says whether the thread of a process whose hook may wait
// (SetRunFlags), stopped in the hook's untraced system call, stopped in a
// read the hook waits in.
func Waiting(m *ptrace.Mem) bool {
	var b [8]byte
	_, err := m.ReadAt(b[:], Ctl+ctlWaiting)
	return err == nil && binary.LittleEndian.Uint64(b[:]) != 0
}

// setFlag sets flag among the hook's CTL_FLAGS.
func setFlag(m *ptrace.Mem, flag uint32) error {
	return changeFlags(m, func(v uint32) uint32 { return v | flag })
}

// clearFlag clears flag among the hook's CTL_FLAGS.
func clearFlag(m *ptrace.Mem, flag uint32) error {
	return changeFlags(m, func(v uint32) uint32 { return v &^ flag })
}

func changeFlags(m *ptrace.Mem, change func(uint32) uint32) error {
	var b [4]byte
	if _, err := m.ReadAt(b[:], Ctl+ctlFlags); err != nil {
		return fmt.Errorf("read the hook page: %w", err)
	}
	v := change(binary.LittleEndian.Uint32(b[:]))
	if _, err := m.WriteAt(binary.LittleEndian.AppendUint32(nil, v), Ctl+ctlFlags); err != nil {
		return fmt.Errorf("write the hook page: %w", err)
	}
	return nil
}

// SetMode puts the hook page of a recorded process in mode, keeping the
// records it holds: ModeTraced once the program runs under a seccomp
// filter of its own, which would judge the hook's calls too (a KILL
// verdict would kill the thread inside the hook, with no record).
func SetMode(m *ptrace.Mem, mode Mode) error {
	if _, err := m.WriteAt(binary.LittleEndian.AppendUint32(nil, uint32(mode)), CtlModeAddr); err != nil {
		return fmt.Errorf("write the hook page: %w", err)
	}
	return nil
}

// Reset puts the hook page of a process rebuilt from a snapshot (a ring
// buffer's segment) in mode, with an empty buffer: the snapshot holds the
// page as the recorder left it, in record mode.
func Reset(m *ptrace.Mem, mode Mode) error {
	b := binary.LittleEndian.AppendUint32(nil, uint32(mode))
	if _, err := m.WriteAt(b, CtlModeAddr); err != nil {
		return fmt.Errorf("write the hook page: %w", err)
	}
	for _, addr := range []uint64{CtlLenAddr, CtlPosAddr} {
		if _, err := m.WriteAt(make([]byte, 8), addr); err != nil {
			return fmt.Errorf("write the hook page: %w", err)
		}
	}
	return nil
}

// StoredFile identifies a file the recorder stored in the trace, as the
// hook compares it with what fstat says of a descriptor an mmap maps.
type StoredFile struct {
	Dev, Ino, Size, MtimeNs uint64
}

// SetStored writes files into the table of stored files of a recorded
// process from entry from on, and makes the table that long: the hook
// records an mmap of one of them itself. Entries past FilesMax are left
// out (an mmap of those files stays traced).
func SetStored(m *ptrace.Mem, from int, files []StoredFile) error {
	if from > FilesMax {
		return nil
	}
	files = files[:min(len(files), FilesMax-from)]
	var b []byte
	for _, f := range files {
		for _, v := range []uint64{f.Dev, f.Ino, f.Size, f.MtimeNs} {
			b = binary.LittleEndian.AppendUint64(b, v)
		}
	}
	if len(b) > 0 {
		if _, err := m.WriteAt(b, Files+32*uint64(from)); err != nil {
			return fmt.Errorf("write the hook page: %w", err)
		}
	}
	n := binary.LittleEndian.AppendUint64(nil, uint64(from+len(files)))
	if _, err := m.WriteAt(n, Ctl+ctlNFiles); err != nil {
		return fmt.Errorf("write the hook page: %w", err)
	}
	return nil
}
