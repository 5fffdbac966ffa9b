package hook

import (
	"fmt"

	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/ptrace"
)

// SiteWrites gathers the patches of system call sites until Flush, which
// writes every stub before any jump to one (another thread could take a
// jump at once), each in runs of contiguous bytes: an exec maps dozens of
// known sites, which took a write of their stub and one of their jump
// each. Record and replay patch the same way.
type SiteWrites struct {
	stubs, jumps *ptrace.Writes
}

// NewSiteWrites starts a batch of site patches in m.
func NewSiteWrites(m *ptrace.Mem) *SiteWrites {
	return &SiteWrites{m.Writes(), m.Writes()}
}

// Add adds the patch of site to call the stub at stub: the stub, then the
// jump over the site.
func (w *SiteWrites) Add(site Site, stub uint64) error {
	jmp, err := site.Jump(stub)
	if err != nil {
		return err
	}
	code, err := site.Stub(stub)
	if err != nil {
		return err
	}
	w.stubs.Add(stub, code)
	w.jumps.Add(site.Start(), jmp)
	return nil
}

// AddTrap adds the patch of the window w around an instruction of kind k
// to jump to its stub at stub: the stub, then the jump.
func (w *SiteWrites) AddTrap(k Trap, win patch.Window, stub uint64) error {
	code, err := k.Stub(stub, win)
	if err != nil {
		return err
	}
	jmp, err := TrapJump(win, stub)
	if err != nil {
		return err
	}
	w.stubs.Add(stub, code)
	w.jumps.Add(win.Start, jmp)
	return nil
}

// LogTo has log told of each write Flush makes, in order: the stubs'
// then the jumps' (ptrace.Writes.Log).
func (w *SiteWrites) LogTo(log func(addr uint64, data []byte)) {
	w.stubs.Log, w.jumps.Log = log, log
}

// Code is the program's code as the patches added leave it, to read and
// to write other patches of the code into (a trapped site put back):
// they go out with the jumps.
func (w *SiteWrites) Code() *ptrace.Writes { return w.jumps }

// Covers says whether a jump not written yet changes the code a site at
// rip reads (SiteCodes): it must be flushed first.
func (w *SiteWrites) Covers(rip uint64) bool {
	return w.jumps.Pending(rip-SiteBefore, SiteCode)
}

// Flush writes the patches added: their stubs, then their jumps.
func (w *SiteWrites) Flush() error {
	if err := w.stubs.Flush(); err != nil {
		return fmt.Errorf("hook stub: %w", err)
	}
	if err := w.jumps.Flush(); err != nil {
		return fmt.Errorf("hook site: %w", err)
	}
	return nil
}

// SiteCodes reads the code FindSite looks at around each rip in rips,
// with one read where it can.
func SiteCodes(m *ptrace.Mem, rips []uint64) ([][]byte, error) {
	codes := make([][]byte, len(rips))
	addrs := make([]uint64, len(rips))
	for i, rip := range rips {
		codes[i], addrs[i] = make([]byte, SiteCode), rip-SiteBefore
	}
	return codes, m.ReadMany(codes, addrs)
}
