package record

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// The program's standard streams. Replay re-emits every write that reached
// the stdout or stderr rewind passed to the program, whatever descriptor
// the program wrote through: 1 and 2, their dups (dup, dup2, dup3,
// F_DUPFD), /proc/self/fd/1 opened again, a descriptor received over a unix
// socket or taken with pidfd_getfd, /dev/tty when the stream is the
// controlling terminal. A descriptor is matched by the file it refers to
// (device and inode), not by its number.

// fileID identifies an open file to tell when the tracee writes to the
// streams rewind passed it. rdev is the device a character device file
// stands for (a terminal), to recognise /dev/tty.
type fileID struct {
	dev, ino uint64
	rdev     uint64
	ok       bool
}

func identify(f *os.File) fileID {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return fileID{}
	}
	return idOf(&st)
}

func idOf(st *unix.Stat_t) fileID {
	id := fileID{dev: st.Dev, ino: st.Ino, ok: true}
	if st.Mode&unix.S_IFMT == unix.S_IFCHR {
		id.rdev = st.Rdev
	}
	return id
}

// devTTY is the device number of /dev/tty, which stands for the opening
// process's controlling terminal.
var devTTY = unix.Mkdev(5, 0)

// streams is what the recorder knows about the program's standard streams.
type streams struct {
	ids [3]fileID // [1] stdout and [2] stderr as rewind passed them
	// fds caches streamOf by (tid, fd) until a call that can change a
	// descriptor table: a stat of /proc/TID/fd/N at every write would cost
	// a system call per write to output-heavy programs.
	fds map[[2]int]int
	// held are threads stopped at the entry of a write to a stream while
	// another thread's write to the same file is still in the kernel
	// (see order.go).
	held []*thread
}

func newStreams(stdout, stderr *os.File) streams {
	return streams{ids: [3]fileID{{}, identify(stdout), identify(stderr)}}
}

// streamsOf identifies the standard output and error of a running process.
func streamsOf(pid int) streams {
	var s streams
	for fd := 1; fd <= 2; fd++ {
		var st unix.Stat_t
		if unix.Stat(fmt.Sprintf("/proc/%d/fd/%d", pid, fd), &st) == nil {
			s.ids[fd] = idOf(&st)
		}
	}
	return s
}

// streamOf says whether fd of tid refers to the program's standard output
// (1) or error (2) as rewind passed them, or neither (0).
func (r *Recorder) streamOf(tid, fd int) int {
	if fd < 0 {
		return 0
	}
	k := [2]int{tid, fd}
	if v, ok := r.out.fds[k]; ok {
		return v
	}
	v := r.statStream(tid, fd)
	if r.out.fds == nil {
		r.out.fds = map[[2]int]int{}
	}
	r.out.fds[k] = v
	return v
}

// statStream compares the file behind fd of tid with the streams rewind
// passed. When stdout and stderr are the same file (2>&1), the descriptor's
// number decides, and other descriptors count as stdout.
func (r *Recorder) statStream(tid, fd int) int {
	var st unix.Stat_t
	if unix.Stat(fmt.Sprintf("/proc/%d/fd/%d", tid, fd), &st) != nil {
		return 0
	}
	id := idOf(&st)
	if id.rdev == devTTY {
		// /dev/tty: the terminal it stands for is the thread's
		// controlling terminal.
		if tty, ok := controllingTTY(tid); ok {
			id = fileID{rdev: tty, ok: true}
		}
	}
	return matchStream(id, fd, &r.out.ids)
}

// matchStream says which of the streams ids (stdout at 1, stderr at 2) the
// file id written through descriptor fd is: the same file (device and
// inode), or the same character device (a terminal opened again by name).
// When stdout and stderr are one file, fd 2 counts as stderr and any other
// descriptor as stdout.
func matchStream(id fileID, fd int, ids *[3]fileID) int {
	match := func(s int) bool {
		want := ids[s]
		if !want.ok || !id.ok {
			return false
		}
		if id.dev == 0 && id.ino == 0 {
			return want.rdev != 0 && want.rdev == id.rdev
		}
		return (id.dev == want.dev && id.ino == want.ino) || (id.rdev != 0 && id.rdev == want.rdev)
	}
	switch {
	case fd == 2 && match(2):
		return 2
	case match(1):
		return 1
	case match(2):
		return 2
	}
	return 0
}

// controllingTTY reads tty_nr, the device of the controlling terminal, from
// /proc/TID/stat (0: none).
func controllingTTY(tid int) (uint64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", tid))
	if err != nil {
		return 0, false
	}
	// The command name in parentheses may hold spaces: count fields
	// after its closing parenthesis (state is field 3, tty_nr field 7).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 5 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(f[4]), 10, 32)
	if err != nil || n == 0 {
		return 0, false
	}
	return decodeTTYNr(n), true
}

// decodeTTYNr turns tty_nr, in the kernel's new_encode_dev encoding (major
// in bits 8-19, minor in bits 0-7 and 20-31), into a device number.
func decodeTTYNr(n uint64) uint64 {
	major := uint32(n>>8) & 0xfff
	minor := uint32(n&0xff) | uint32(n>>12)&0xfff00
	return unix.Mkdev(major, minor)
}

// forgetStreams drops the cache of streamOf after a call that may have
// closed a descriptor or replaced what it refers to. Calls that only make
// new descriptors (open, socket, recvmsg with SCM_RIGHTS, pidfd_getfd) need
// not: a new descriptor takes a number that was free, and a number is only
// freed by the calls listed here.
func (r *Recorder) forgetStreams(nr int) {
	if r.out.fds != nil && forgetsStreams(nr) {
		r.out.fds = nil
	}
}

// forgetsStreams says whether call nr may change which descriptors are
// the standard streams' files.
func forgetsStreams(nr int) bool {
	switch nr {
	case unix.SYS_CLOSE, unix.SYS_CLOSE_RANGE, unix.SYS_DUP, unix.SYS_DUP2, unix.SYS_DUP3, unix.SYS_FCNTL,
		unix.SYS_EXECVE, unix.SYS_EXECVEAT, unix.SYS_UNSHARE, unix.SYS_CLONE, unix.SYS_CLONE3, unix.SYS_FORK, unix.SYS_VFORK,
		unix.SYS_IOCTL: // SECCOMP_IOCTL_NOTIF_ADDFD can replace a descriptor of another process
		return true
	}
	return false
}

// writeStream says which standard stream the call t is entering writes to
// (0: none, or not a write), judged at entry: another thread may close the
// descriptor before a blocking write returns.
func (r *Recorder) writeStream(t *thread, c *syscalls.Call) int {
	fd, src := syscalls.WriteTarget(c)
	if src == syscalls.NotWrite {
		return 0
	}
	return r.streamOf(t.tid, fd)
}

// captureWrite hashes what a successful write-like call wrote, for replay's
// check, and keeps the bytes that went to a standard stream for it to
// re-emit.
func (r *Recorder) captureWrite(t *thread, c *syscalls.Call, e *trace.Event) {
	_, src := syscalls.WriteTarget(c)
	if src == syscalls.NotWrite || c.Ret <= 0 {
		return
	}
	n := int(min(c.Ret, maxHashed))
	if t.stream != 0 && c.Ret > maxHashed {
		r.warnOnce("stream size", "rewind: warning: %s of %d bytes into standard %s at event %d: replay checks and re-emits its first %d MiB\n",
			syscalls.Name(c.Nr), c.Ret, streamName(t.stream), r.events(), maxHashed>>20)
	}
	var data []byte
	switch src {
	case syscalls.FromMemory:
		data = syscalls.Written(c, t.proc.mem, n)
		e.Hash = trace.WriteSum(trace.WriteHashCRC, data)
	case syscalls.FromFile:
		if t.stream == 0 {
			return
		}
		var err error
		if data, err = r.readSource(t, c); err != nil {
			r.warnOnce("stream "+syscalls.Name(c.Nr), "rewind: warning: %s into standard %s at event %d: %v; replay will not re-emit its bytes\n",
				syscalls.Name(c.Nr), streamName(t.stream), r.events(), err)
			return
		}
	case syscalls.FromMessages:
		if t.stream != 0 {
			r.warnOnce("stream "+syscalls.Name(c.Nr), "rewind: warning: %s into standard %s at event %d: replay will not re-emit its bytes\n",
				syscalls.Name(c.Nr), streamName(t.stream), r.events())
		}
		return
	}
	switch t.stream {
	case 1:
		e.Flags |= trace.FlagStdout
		e.Data = data
	case 2:
		e.Flags |= trace.FlagStderr
		e.Data = data
	}
}

func streamName(s int) string {
	if s == 2 {
		return "error"
	}
	return "output"
}

// readSource reads the bytes a sendfile, splice or copy_file_range took
// from a regular file, once it returned: the file's offset (the one passed,
// or the descriptor's position) has advanced past them. Bytes taken from a
// pipe or a socket are gone by then.
func (r *Recorder) readSource(t *thread, c *syscalls.Call) ([]byte, error) {
	fd, offPtr := syscalls.InFd(c)
	path := fmt.Sprintf("/proc/%d/fd/%d", t.tid, fd)
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return nil, fmt.Errorf("source descriptor %d: %w", fd, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("its source (descriptor %d) is not a regular file", fd)
	}
	var end int64
	if offPtr != 0 {
		var b [8]byte
		if _, err := t.proc.mem.ReadAt(b[:], offPtr); err != nil {
			return nil, fmt.Errorf("read its offset: %w", err)
		}
		end = int64(binary.LittleEndian.Uint64(b[:]))
	} else {
		pos, err := fdPos(t.tid, fd)
		if err != nil {
			return nil, err
		}
		end = pos
	}
	n := min(c.Ret, maxHashed)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open its source: %w", err)
	}
	defer f.Close()
	buf := make([]byte, n)
	got, err := f.ReadAt(buf, end-c.Ret)
	if int64(got) < n {
		return nil, fmt.Errorf("read its source: %d of %d bytes: %v", got, n, err)
	}
	return buf, nil
}

// fdPos reads the file position of fd of tid from /proc/TID/fdinfo.
func fdPos(tid, fd int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/fdinfo/%d", tid, fd))
	if err != nil {
		return 0, fmt.Errorf("position of descriptor %d: %w", fd, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("pos:")); ok {
			return strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
		}
	}
	return 0, fmt.Errorf("position of descriptor %d: not in fdinfo", fd)
}
