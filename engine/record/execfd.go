package record

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// execFdFile stores the program an execve or execveat of t runs through one
// of its descriptors (fexecve of a memfd, as runc and systemd do; execveat
// relative to a directory descriptor; a /dev/fd path). Replay opens no
// descriptors (their calls are emulated): it needs the file's contents, or
// for a directory descriptor its path, to give the replaying process that
// descriptor before the exec (replay's execfd.go). Nil if the call does not
// go through a descriptor or the file cannot be read (the exec fails).
func (r *Recorder) execFdFile(t *thread, c *syscalls.Call) *trace.MapFile {
	arg := c.Args[0]
	if c.Nr == unix.SYS_EXECVEAT {
		arg = c.Args[1]
	}
	path, err := t.proc.mem.ReadString(arg, unix.PathMax)
	if err != nil {
		return nil
	}
	fd, rest, ok := syscalls.ExecDescriptor(c, string(path))
	if !ok {
		return nil
	}
	link := fmt.Sprintf("/proc/%d/fd/%d", t.proc.pid, fd)
	target, err := os.Readlink(link)
	if err != nil {
		return nil // not open: the exec fails with EBADF
	}
	file := link
	if rest != "" {
		file += "/" + rest
	}
	m, err := r.files.captureFile(file, 0, 0)
	if err != nil || m == nil {
		return nil // the exec fails (no such file, not a regular file)
	}
	m.Path = strings.TrimSuffix(target, " (deleted)")
	if rest != "" {
		m.Path += "/" + rest
	}
	return m
}
