package ptrace

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"os"
	"slices"

	"golang.org/x/sys/unix"
)

// Mem reads and writes a tracee's memory. Reads use process_vm_readv (fast,
// no stop needed); writes go through /proc/PID/mem, which may write
// read-only pages (file contents, breakpoints) as the kernel allows a tracer.
// The file is bound to an address space: reopen it after an exec.
type Mem struct {
	pid int
	f   *os.File
	// maps is /proc/PID/maps, open for VMAs' queries; noQuery says the
	// kernel has no PROCMAP_QUERY.
	maps    *os.File
	noQuery bool
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
func (m *Mem) Close() error {
	if m.maps != nil {
		m.maps.Close()
		m.maps = nil
	}
	return m.f.Close()
}

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

// ReadMany reads each of bufs at the address of the same index in addrs,
// with one process_vm_readv where it can (where ReadAt would make one
// each), else each with ReadAt.
func (m *Mem) ReadMany(bufs [][]byte, addrs []uint64) error {
	return vectored(bufs, addrs, unix.ProcessVMReadv, m.pid, func(b []byte, addr uint64) error {
		_, err := m.ReadAt(b, addr)
		return err
	})
}

// WriteMany writes each of bufs at the address of the same index in
// addrs, with one process_vm_writev where the pages are writable by the
// tracee (where WriteAt makes a write each), else each with WriteAt.
func (m *Mem) WriteMany(bufs [][]byte, addrs []uint64) error {
	return vectored(bufs, addrs, unix.ProcessVMWritev, m.pid, func(b []byte, addr uint64) error {
		_, err := m.WriteAt(b, addr)
		return err
	})
}

// vectored moves bufs to or from addrs of process pid with call
// (process_vm_readv or process_vm_writev), IOV_MAX at a time, or with one
// each where a call does not move them all.
func vectored(bufs [][]byte, addrs []uint64, call func(int, []unix.Iovec, []unix.RemoteIovec, uint) (int, error),
	pid int, one func([]byte, uint64) error) error {
	const iovMax = 1024 // IOV_MAX
	for len(bufs) > 0 {
		n := min(len(bufs), iovMax)
		local := make([]unix.Iovec, 0, n)
		remote := make([]unix.RemoteIovec, 0, n)
		total := 0
		for i, b := range bufs[:n] {
			if len(b) > 0 {
				local = append(local, unix.Iovec{Base: &b[0], Len: uint64(len(b))})
				remote = append(remote, unix.RemoteIovec{Base: uintptr(addrs[i]), Len: len(b)})
				total += len(b)
			}
		}
		if got, err := call(pid, local, remote, 0); err != nil || got != total {
			for i, b := range bufs[:n] {
				if err := one(b, addrs[i]); err != nil {
					return err
				}
			}
		}
		bufs, addrs = bufs[n:], addrs[n:]
	}
	return nil
}

// Writes gathers writes to a tracee's memory until Flush, which makes one
// write for each run of writes less than a page apart, the bytes between
// them read first: the sites an exec maps were patched with a write for
// each stub and each jump (~220 writes to /proc/PID/mem an exec of sh,
// each a system call and a walk of its page tables, on ~40 pages).
type Writes struct {
	m  *Mem
	ws []pendingWrite
	// Log, when not nil, is told of each write Flush makes, in order (data
	// is not its own to keep).
	Log func(addr uint64, data []byte)
	// pre holds the bytes at preAt that Preread read, for ReadAt.
	pre   []byte
	preAt uint64
}

type pendingWrite struct {
	addr uint64
	data []byte
}

// mergeGap is the widest gap between two writes Flush makes one of: below
// a page, so that the run writes no page that no write touches (a page of
// a file's code written is the process's own copy from then on).
const mergeGap = 4095

// Writes starts a batch of writes to m.
func (m *Mem) Writes() *Writes { return &Writes{m: m} }

// Add adds a write of data (kept, not copied) at addr.
func (w *Writes) Add(addr uint64, data []byte) {
	w.ws = append(w.ws, pendingWrite{addr, data})
}

// ReadAt reads the tracee's memory as the writes added will leave it:
// code that patches one site after another reads what the last one
// wrote without a flush.
func (w *Writes) ReadAt(p []byte, addr uint64) (int, error) {
	var n int
	var err error
	if addr >= w.preAt && addr+uint64(len(p)) <= w.preAt+uint64(len(w.pre)) {
		n = copy(p, w.pre[addr-w.preAt:])
	} else {
		n, err = w.m.ReadAt(p, addr)
	}
	for _, x := range w.ws {
		lo, hi := max(x.addr, addr), min(x.addr+uint64(len(x.data)), addr+uint64(n))
		if lo < hi {
			copy(p[lo-addr:hi-addr], x.data[lo-x.addr:])
		}
	}
	return n, err
}

// Preread reads [lo, hi) at once, for ReadAt to serve the reads within
// it: the patcher reads each of the loader's ~30 windows around a cpuid
// it patches, a system call each. Nothing else may write there until the
// batch is flushed. Where it cannot be read, ReadAt reads the tracee.
func (w *Writes) Preread(lo, hi uint64) {
	w.pre, w.preAt = nil, 0
	if hi <= lo {
		return
	}
	b := make([]byte, hi-lo)
	if n, err := w.m.ReadAt(b, lo); err == nil && n == len(b) {
		w.pre, w.preAt = b, lo
	}
}

// WriteAt adds a write of a copy of p at addr: Writes is memory to the
// patcher (patch.Memory), whose writes then go out at the next Flush.
func (w *Writes) WriteAt(p []byte, addr uint64) (int, error) {
	w.Add(addr, slices.Clone(p))
	return len(p), nil
}

// Pending says whether a write not yet made touches [addr, addr+n).
func (w *Writes) Pending(addr uint64, n int) bool {
	for _, p := range w.ws {
		if p.addr < addr+uint64(n) && addr < p.addr+uint64(len(p.data)) {
			return true
		}
	}
	return false
}

// Flush makes the writes added, as if in the order they were added.
func (w *Writes) Flush() error {
	ws := w.ws
	w.ws, w.pre = nil, nil
	// Runs of writes that overlap or lie less than mergeGap apart, each
	// read whole at once (where it has more than one write) and written
	// over in the order the writes were added.
	order := make([]int, len(ws))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(ws[a].addr, ws[b].addr) })
	type run struct {
		lo, hi uint64
		of     []int // indices into ws
	}
	var runs []run
	for _, i := range order {
		p := ws[i]
		end := p.addr + uint64(len(p.data))
		if n := len(runs); n > 0 && p.addr <= runs[n-1].hi+mergeGap {
			r := &runs[n-1]
			r.hi, r.of = max(r.hi, end), append(r.of, i)
			continue
		}
		runs = append(runs, run{lo: p.addr, hi: end, of: []int{i}})
	}
	bufs := make([][]byte, len(runs))
	var merged [][]byte
	var mergedAt []uint64
	for k, r := range runs {
		if len(r.of) == 1 {
			bufs[k] = ws[r.of[0]].data
			continue
		}
		bufs[k] = make([]byte, r.hi-r.lo)
		merged, mergedAt = append(merged, bufs[k]), append(mergedAt, r.lo)
	}
	if len(merged) > 0 && w.m.ReadMany(merged, mergedAt) != nil {
		return w.each(ws) // bytes between writes that cannot be read
	}
	for k, r := range runs {
		if len(r.of) > 1 {
			slices.Sort(r.of)
			for _, i := range r.of {
				copy(bufs[k][ws[i].addr-r.lo:], ws[i].data)
			}
		}
		if _, err := w.m.WriteAt(bufs[k], r.lo); err != nil {
			return err
		}
		if w.Log != nil {
			w.Log(r.lo, bufs[k])
		}
	}
	return nil
}

// each makes the writes ws one at a time, in order.
func (w *Writes) each(ws []pendingWrite) error {
	for _, p := range ws {
		if _, err := w.m.WriteAt(p.data, p.addr); err != nil {
			return err
		}
		if w.Log != nil {
			w.Log(p.addr, p.data)
		}
	}
	return nil
}
