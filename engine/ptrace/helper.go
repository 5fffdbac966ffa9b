package ptrace

import (
	_ "embed"
	"encoding/binary"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// helperImage is the exec helper (helper/helper.c), a program without libc
// that starts in a fraction of a millisecond where rewind re-executed as
// its own helper (MaybeRunHelper) started a Go runtime and initialised
// every package first: ~6 ms of each recording's and replay's start.
//
//go:generate sh helper/build.sh
//go:embed helper.bin
var helperImage []byte

// helperName is the helper's argv[0], what ps shows of it.
const helperName = "rewind-exec-helper"

// helperFd is where the helper's image is in the helper: ExtraFiles puts
// the sync pipe at 3, the ready pipe at 4, the image at 5.
const helperFd = 5

// helperFile is a sealed memfd holding helperImage, made once; nil when
// this kernel cannot have one (rewind then runs itself as the helper, as
// it does when the memfd cannot be executed).
var helperFile = sync.OnceValue(func() *os.File {
	// MFD_EXEC where vm.memfd_noexec would otherwise make it not
	// executable; kernels before 6.3 know no such flag.
	fd, err := unix.MemfdCreate(helperName, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_EXEC)
	if err == unix.EINVAL {
		fd, err = unix.MemfdCreate(helperName, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	}
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), helperName)
	if _, err := f.Write(helperImage); err != nil {
		f.Close()
		return nil
	}
	seals := unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, seals); err != nil {
		f.Close()
		return nil
	}
	return f
})

// helperInput is what the sync pipe brings the exec helper: with filter
// (the native helper's), the count of the filter's instructions and them,
// then the environment, NUL-terminated strings.
func helperInput(filter bool, env []string) []byte {
	var b []byte
	if filter {
		f := traceFilter()
		b = binary.LittleEndian.AppendUint16(b, uint16(len(f)))
		for _, ins := range f {
			b = binary.LittleEndian.AppendUint16(b, ins.Code)
			b = append(b, ins.Jt, ins.Jf)
			b = binary.LittleEndian.AppendUint32(b, ins.K)
		}
	}
	for _, kv := range env {
		b = append(append(b, kv...), 0)
	}
	return b
}

// helperPath is the path the child execs the helper's image by.
var helperPath = fmt.Sprintf("/proc/self/fd/%d", helperFd)

// VesselPath is a path a process of this user can exec for a fresh, nearly
// empty image: the exec helper's sealed memfd, through rewind's own /proc
// entry. Replay execs it where it rebuilds an exec from the trace (the
// image is unmapped before one instruction of it runs). "" where this
// kernel has no such memfd.
func VesselPath() string {
	f := helperFile()
	if f == nil {
		return ""
	}
	return fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), f.Fd())
}
