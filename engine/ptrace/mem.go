package ptrace

import (
	"fmt"
	"hash/fnv"
	"os"

	"golang.org/x/sys/unix"
)

// Mem reads and writes a tracee's memory. Reads use process_vm_readv (fast,
// no stop needed); writes go through /proc/PID/mem, which may write
// read-only pages (file contents, breakpoints) as the kernel allows a tracer.
// The file is bound to an address space: reopen it after an exec.
type Mem struct {
	pid int
	f   *os.File
}

// OpenMem opens the memory of process pid.
func OpenMem(pid int) (*Mem, error) {
	f, err := os.OpenFile(fmt.Sprintf("/proc/%d/mem", pid), os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("open memory of %d: %w", pid, err)
	}
	return &Mem{pid: pid, f: f}, nil
}

// Close releases the file.
func (m *Mem) Close() error { return m.f.Close() }

// ReadAt reads len(p) bytes at addr, returning how many could be read.
func (m *Mem) ReadAt(p []byte, addr uint64) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	local := unix.Iovec{Base: &p[0], Len: uint64(len(p))}
	remote := unix.RemoteIovec{Base: uintptr(addr), Len: len(p)}
	n, err := unix.ProcessVMReadv(m.pid, []unix.Iovec{local}, []unix.RemoteIovec{remote}, 0)
	if err == nil && n == len(p) {
		return n, nil
	}
	// process_vm_readv refuses PROT_NONE and stops at the first bad page;
	// /proc/PID/mem reads what the kernel lets a tracer read.
	n2, err2 := m.f.ReadAt(p, int64(addr))
	if n2 > n {
		n, err = n2, err2
	}
	if n == len(p) {
		return n, nil
	}
	if err == nil {
		err = fmt.Errorf("short read")
	}
	return n, fmt.Errorf("read %d bytes at %#x in %d: %w", len(p), addr, m.pid, err)
}

// WriteAt writes p at addr.
func (m *Mem) WriteAt(p []byte, addr uint64) (int, error) {
	n, err := m.f.WriteAt(p, int64(addr))
	if err != nil {
		return n, fmt.Errorf("write %d bytes at %#x in %d: %w", len(p), addr, m.pid, err)
	}
	return n, nil
}

// ReadString reads a NUL-terminated string of at most max bytes.
func (m *Mem) ReadString(addr uint64, max int) ([]byte, error) {
	var out []byte
	buf := make([]byte, 256)
	for len(out) < max {
		// Stay within the page so a string ending before an unmapped page reads.
		n := int(4096 - (addr % 4096))
		if n > len(buf) {
			n = len(buf)
		}
		got, err := m.ReadAt(buf[:n], addr)
		for i := 0; i < got; i++ {
			if buf[i] == 0 {
				return append(out, buf[:i]...), nil
			}
		}
		out = append(out, buf[:got]...)
		if err != nil {
			return out, err
		}
		addr += uint64(got)
	}
	return out[:max], nil
}

// Tgkill sends sig to thread tid of process tgid.
func Tgkill(tgid, tid, sig int) error {
	if err := unix.Tgkill(tgid, tid, unix.Signal(sig)); err != nil {
		return fmt.Errorf("tgkill %d/%d signal %d: %w", tgid, tid, sig, err)
	}
	return nil
}

// Stack window of a preemption fingerprint: the red zone below rsp and the
// frames just above it.
const (
	stackBelow = 128
	stackAbove = 256
)

// StackHash fingerprints the stack window around rsp. A spin preempted in
// recording is found again in replay as the first pass at its pc with the
// same registers and the same StackHash.
func (m *Mem) StackHash(rsp uint64) uint64 {
	buf := make([]byte, stackBelow+stackAbove)
	n, _ := m.ReadAt(buf, rsp-stackBelow)
	h := fnv.New64a()
	h.Write(buf[:n])
	return h.Sum64()
}
