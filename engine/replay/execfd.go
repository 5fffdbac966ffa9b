package replay

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// provideExecFd gives t's process, about to re-execute the exec e, the
// descriptor the recorded exec ran its program through (the recorder's
// execfd.go stored the program), at the recorded number: the kernel names
// the program after it (/dev/fd/N), which the new image's stack holds. The
// program itself becomes a memfd filled from the recording (named as the
// recorded memfd was); a directory is opened where it was recorded. It
// reports whether the descriptor is the program itself, so that no file
// needs to be at the recorded path.
func (s *Session) provideExecFd(t *rthread, e *trace.Event, c syscalls.Call) (bool, error) {
	next := s.peekThread(t.rec)
	if e.Map == nil || next == nil || next.Kind != trace.KindExec {
		return false, nil // failed when recorded: it fails again without
	}
	arg := c.Args[0]
	if c.Nr == unix.SYS_EXECVEAT {
		arg = c.Args[1]
	}
	path, err := t.proc.mem.ReadString(arg, unix.PathMax)
	if err != nil {
		return false, fmt.Errorf("exec through a descriptor: read the path: %w", err)
	}
	fd, rest, ok := syscalls.ExecDescriptor(&c, string(path))
	if !ok {
		return false, nil
	}
	data, err := s.blob(e.Map.Blob)
	if err != nil {
		return false, err
	}
	var tmp int64
	if rest == "" {
		name := "rewind-exe"
		if n, ok := strings.CutPrefix(e.Map.Path, "/memfd:"); ok {
			name = n
		}
		tmp, err = s.injectWithString(t, append([]byte(name), 0), func(addr uint64) (int64, error) {
			return ptrace.InjectSyscall(t.real, t.proc.mem, unix.SYS_MEMFD_CREATE, addr, 0)
		})
		if err == nil && tmp >= 0 {
			err = fillFd(t.proc.real, int(tmp), data)
		}
	} else {
		dir, ok := strings.CutSuffix(e.Map.Path, "/"+rest)
		if !ok {
			return false, fmt.Errorf("exec of %s through descriptor %d: no directory recorded", rest, fd)
		}
		tmp, err = s.injectWithString(t, append([]byte(dir), 0), func(addr uint64) (int64, error) {
			return ptrace.InjectSyscall(t.real, t.proc.mem, unix.SYS_OPENAT, atFDCWD, addr, unix.O_PATH|unix.O_DIRECTORY, 0)
		})
	}
	if err == nil && tmp < 0 {
		err = unix.Errno(-tmp)
	}
	if err != nil {
		return false, fmt.Errorf("exec through descriptor %d: give the replay %s: %w", fd, e.Map.Path, err)
	}
	// A script run through a close-on-exec descriptor cannot be read by its
	// interpreter: the kernel refuses it, so a recorded success had none.
	var cloexec uint64
	if bytes.HasPrefix(data, []byte("\x7fELF")) {
		cloexec = unix.O_CLOEXEC
	}
	if int(tmp) != fd {
		ret, err := ptrace.InjectSyscall(t.real, t.proc.mem, unix.SYS_DUP3, uint64(tmp), uint64(fd), cloexec)
		ptrace.InjectSyscall(t.real, t.proc.mem, unix.SYS_CLOSE, uint64(tmp))
		if err == nil && ret < 0 {
			err = unix.Errno(-ret)
		}
		if err != nil {
			return false, fmt.Errorf("exec through descriptor %d: %w", fd, err)
		}
	} else if cloexec != 0 {
		if _, err := ptrace.InjectSyscall(t.real, t.proc.mem, unix.SYS_FCNTL, uint64(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
			return false, fmt.Errorf("exec through descriptor %d: %w", fd, err)
		}
	}
	return rest == "", nil
}

// fillFd writes data into the memfd fd of process pid, from here.
func fillFd(pid, fd int, data []byte) error {
	f, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/%d", pid, fd), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// execFailed tells whether the exec t is at the entry of (e) failed when
// recorded: its end follows without a new image. The kernel may not fail
// it again in replay (a seccomp filter refused it: replay installs none),
// and a failed exec did nothing, so it is emulated.
func (s *Session) execFailed(t *rthread, e *trace.Event, c *syscalls.Call) bool {
	if e.Kind != trace.KindSyscallEntry || c.Nr != unix.SYS_EXECVE && c.Nr != unix.SYS_EXECVEAT {
		return false
	}
	next := s.peekThread(t.rec)
	return next != nil && next.Kind == trace.KindSyscallExit
}
