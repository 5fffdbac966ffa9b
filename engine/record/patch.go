package record

import (
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/attach"
	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Code patching (engine/patch): rdrand and rdseed become traps the recorder
// emulates and logs, and the vDSO's functions become system calls. Replay
// patches the same sites from the same bytes.

// illIllopn is ILL_ILLOPN, the si_code of the SIGILL a ud2 raises.
const illIllopn = 2

// codeFiles are the files the recorder finds sites with: the executable
// file mappings' files by blob, and the files the kernel mapped at exec.
// Their layout is read only when a mapping holds a candidate instruction,
// maybe after the program closed its descriptor: the file stays open here
// until the recording ends. The sites themselves belong to each process
// (process.code).
type codeFiles struct {
	patch.Images
	open []*os.File
	// keys are the identities of the files of images, for the sites
	// kept across recordings (sitecache.go).
	keys map[*patch.Image]trace.FileKey
	// analyses keeps the images' analyses across recordings (nil: off).
	analyses *patch.AnalysisStore
	// wx: the writable and executable memory warning was given.
	wx bool
}

// close releases the files kept for their layouts.
func (c *codeFiles) close() {
	for _, f := range c.open {
		f.Close()
	}
	c.open = nil
}

// blobImage is the file that fd of tid maps, stored as blob: the same bytes
// replay has. It opens the file now, while the descriptor is known.
func (c *codeFiles) blobImage(blob uint32, tid, fd int) *patch.Image {
	if im := c.Cached(blob); im != nil {
		return im
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/fd/%d", tid, fd))
	if err != nil {
		return nil
	}
	c.open = append(c.open, f)
	defer func() {
		if st, err := f.Stat(); err == nil {
			c.noteKey(c.Cached(blob), st)
		}
	}()
	return c.Blob(blob, func() ([]byte, error) {
		st, err := f.Stat()
		if err != nil {
			return nil, err
		}
		data := make([]byte, st.Size())
		n, err := f.ReadAt(data, 0)
		if err != nil && err != io.EOF {
			return nil, err
		}
		return data[:n], nil
	})
}

// execImage is Images.Exec, noting the file's identity.
func (c *codeFiles) execImage(path string) *patch.Image {
	im := c.Exec(path)
	if im != nil && c.keys[im] == (trace.FileKey{}) {
		if st, err := os.Stat(path); err == nil {
			c.noteKey(im, st)
		}
	}
	return im
}

// noteKey notes the identity of the file of im, as st describes it, and
// has the analysis kept for it seeded when needed.
func (c *codeFiles) noteKey(im *patch.Image, st os.FileInfo) {
	k, ok := trace.FileKeyOf(st)
	if im == nil || !ok {
		return
	}
	if c.keys == nil {
		c.keys = map[*patch.Image]trace.FileKey{}
	}
	c.keys[im] = k
	c.analyses.Follow(im, k.Name)
}

// warn prints the patcher's warnings, one line each, with the event they
// belong to; the writable-and-executable one only once.
func (r *Recorder) warnPatch(warns []string) {
	for _, w := range warns {
		if strings.Contains(w, "writable and executable") {
			if r.code.wx {
				continue
			}
			r.code.wx = true
		}
		fmt.Fprintf(r.opts.Warn, "rewind: warning: %s (event %d)\n", w, r.events())
	}
}

// startImage prepares a new image at its exec stop: it finds AT_RANDOM and
// the vDSO, patches the vDSO's functions into system calls (or hides it
// when it cannot) and patches the rdrand and rdseed of the executable and
// its interpreter. It returns the initial state and the address of the
// patched vDSO (0: none, or hidden), which the exec event keeps.
func (r *Recorder) startImage(t *thread, rsp uint64, entries []ptrace.MapEntry) (ptrace.StartState, uint64, error) {
	p := t.proc
	st, err := ptrace.InitialState(p.mem, rsp)
	if err != nil {
		return st, 0, err
	}
	vdso := st.VDSO
	p.vdso, p.vdsoSites = nil, nil
	if vdso != 0 {
		if err := r.patchVDSO(p, vdso); err != nil {
			fmt.Fprintf(r.opts.Warn, "rewind: warning: %v: the vDSO is hidden from the program, which makes system calls instead\n", err)
			if err := ptrace.HideVDSO(p.mem, &st); err != nil {
				return st, 0, err
			}
			vdso = 0
		}
	}
	// A new address space: a new table (a vfork child's was its parent's).
	p.code = r.newSpace()
	p.hooks = nil
	maps, err := patch.ExecMappings(p.pid, entries, r.code.execImage)
	if err != nil {
		return st, 0, err
	}
	for _, mp := range maps {
		r.warnPatch(p.code.Map(p.mem, mp))
	}
	r.guardDirty = true
	return st, vdso, nil
}

// patchVDSO patches the vDSO of process p at addr into system calls,
// keeping its bytes as they were when the detach or a ring buffer's
// snapshot needs them.
func (r *Recorder) patchVDSO(p *process, addr uint64) error {
	if r.att != nil || r.opts.KeepLast > 0 {
		v, err := patch.ReadVDSO(p.mem, addr)
		if err != nil {
			return err
		}
		p.vdso = &attach.Patch{Addr: addr, Orig: v.Data, Whole: true}
	}
	sites, unknown, err := patch.PatchVDSO(p.mem, addr)
	if err != nil {
		return err
	}
	p.vdsoSites = sites
	if len(unknown) > 0 {
		r.warnOnce("vdso unknown functions", "rewind: warning: the vDSO exports functions rewind does not know (%s): they return ENOSYS\n",
			strings.Join(unknown, ", "))
	}
	return nil
}

// inheritCode gives a new process its parent's sites: its memory is a copy
// of the parent's, traps included, or the parent's own (vfork, clone with
// CLONE_VM), and then so is the table.
func (r *Recorder) inheritCode(parent *process, pid int) *patch.Space {
	if parent == nil || parent.code == nil {
		return r.newSpace()
	}
	if same, err := patch.SharedMemory(parent.pid, pid); err == nil && same {
		return parent.code
	}
	return parent.code.Clone()
}

// patchAfterSyscall follows a completed system call that changed the
// address space: new executable memory is patched.
func (r *Recorder) patchAfterSyscall(t *thread, c *syscalls.Call, e *trace.Event) {
	image := func() *patch.Image {
		if e.Map == nil {
			return nil
		}
		return r.code.blobImage(e.Map.Blob, t.tid, int(int32(c.Args[4])))
	}
	sites := t.proc.code.Len()
	r.warnPatch(t.proc.code.AfterSyscall(t.proc.mem, c.Nr, c.Args, uint64(c.Ret), image))
	if r.att != nil && t.proc.code.Len() != sites {
		r.guardDirty = true // sites the guard must know to put back
	}
}

// emulateRand completes a patched rdrand or rdseed the thread trapped on
// (a SIGILL at one of the sites) with the recorder's own instruction, and
// logs what it returned. It reports false for any other SIGILL.
func (r *Recorder) emulateRand(t *thread, regs *trace.Regs, info []byte) (bool, error) {
	site, ok := t.proc.code.Site(regs[trace.RIP])
	if !ok || ptrace.SiCode(info) != illIllopn {
		return false, nil
	}
	if t.spin.active() {
		// Trapped while the spin detector stepped it: an event is a
		// deterministic point, the detector starts afresh.
		r.cancelSpin(t)
	}
	switch site.Op {
	case patch.Cpuid:
		return true, r.emulateCpuid(t, site, regs) // cpuid.go
	case patch.Xgetbv:
		return true, r.emulateXgetbv(t, site, regs)
	}
	e := &trace.Event{Kind: trace.KindRdrand, Tid: int32(t.tid), Regs: *regs}
	var v uint64
	var good bool
	if site.Op == patch.Rdseed {
		v, good = rdseed()
		e.Flags = trace.FlagRdseed
	} else {
		v, good = rdrand()
	}
	if good {
		e.Value, e.Aux = site.Truncate(v), 1
	}
	site.Emulate(regs, e.Value, good)
	return true, r.completeTrapped(t, e, site, regs)
}

// completeTrapped gives t the registers regs, with which the trapped
// instruction at site is done, logs its event e and lets t go on.
func (r *Recorder) completeTrapped(t *thread, e *trace.Event, site *patch.Site, regs *trace.Regs) error {
	if err := ptrace.SetRegs(t.tid, regs); err != nil {
		return fmt.Errorf("complete the %s at %#x: %w", site.Op, site.Addr, err)
	}
	if err := r.log(e); err != nil {
		return err
	}
	t.resumeRegs, t.haveRegs = *regs, true
	return r.resumeLogged(t)
}

// isMemoryCall tells the calls patchAfterSyscall follows.
func isMemoryCall(nr int) bool {
	switch nr {
	case unix.SYS_MMAP, unix.SYS_MPROTECT, unix.SYS_PKEY_MPROTECT, unix.SYS_MUNMAP, unix.SYS_MREMAP:
		return true
	}
	return false
}
