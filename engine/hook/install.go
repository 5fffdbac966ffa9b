package hook

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
)

// ID names the image: a trace records the one it was made with, and
// replay needs the same (the calls it replays are made by that code).
func ID() string {
	sum := sha256.Sum256(Image)
	return hex.EncodeToString(sum[:8])
}

// Install maps the hook page into the process of thread tid, stopped at
// its exec (nothing of the program has run), with mode. The same calls in
// recording and replay give the same address space.
func Install(tid int, m *ptrace.Mem, mode Mode) error {
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
	}
	if _, err := m.WriteAt(Image, Base); err != nil {
		return fmt.Errorf("write the hook page: %w", err)
	}
	if _, err := m.WriteAt(binary.LittleEndian.AppendUint32(nil, uint32(mode)), CtlModeAddr); err != nil {
		return fmt.Errorf("write the hook page: %w", err)
	}
	return nil
}
