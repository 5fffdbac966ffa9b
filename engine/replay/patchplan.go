package replay

import (
	"encoding/binary"
	"slices"
	"unsafe"

	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Patch plans, as the recorder's (engine/record/patchplan.go): each child
// of a shell or a make maps the same loader and libc at the same places
// and patches the same known sites, which patchKnownSites worked out anew
// at each exec (read the sites' code and the windows around the trapped
// instructions, build the stubs, read the bytes between the writes). What
// it did for a list of patches is kept as a plan (the stub pages it
// mapped, its writes, the code it told the debugger of) and done again,
// with nothing read, for the same list where the same files are mapped at
// the same places with the same sites known to the address space.

// maxPlans bounds the plans a replay keeps (each a few tens of KB).
const maxPlans = 256

// replayPlan is what patchKnownSites did, in order.
type replayPlan struct {
	ops []planOp
	// images keeps the images the key names by address alive.
	images []*patch.Image
}

type planKind uint8

const (
	opMap      planKind = iota // map the stub pages addr (hook.PackPages)
	opWrite                    // write data at addr
	opForget                   // forget the trapped site at addr (put back by a write)
	opRemember                 // tell the debugger of data, the code patched over at addr
)

// planOp is one step of a plan.
type planOp struct {
	kind planKind
	addr uint64
	data []byte
}

// add appends op to the plan being made (none: pl is nil).
func (pl *replayPlan) add(op planOp) {
	if pl != nil {
		pl.ops = append(pl.ops, op)
	}
}

// write keeps a write the plan being made made (ptrace.Writes.Log).
func (pl *replayPlan) write(addr uint64, data []byte) {
	pl.add(planOp{kind: opWrite, addr: addr, data: slices.Clone(data)})
}

// remember tells the debugger of the program's code at addr, patched over
// (patch.Space.Remember), and the plan being made of it.
func (s *Session) remember(t *rthread, addr uint64, code []byte) {
	t.proc.code.Remember(addr, code)
	s.planning.add(planOp{kind: opRemember, addr: addr, data: slices.Clone(code)})
}

// planKey names what patchKnownSites's work for hooks depends on beyond
// them: the files mapped around their sites, where, and the sites (trapped
// instructions, patched code) the address space knows there. images are
// those files' images, which the key names by address.
func planKey(t *rthread, hooks []trace.HookPatch) (string, []*patch.Image) {
	var b []byte
	u64 := func(v uint64) { b = binary.LittleEndian.AppendUint64(b, v) }
	lo, hi := ^uint64(0), uint64(0)
	for _, h := range hooks {
		u64(h.Site)
		u64(h.Stub)
		u64(h.Page)
		u64(uint64(h.Nr))
		lo, hi = min(lo, h.Site), max(hi, h.Site)
	}
	// Around the sites: the windows of trapped instructions reach this far.
	const reach = 4096
	lo, hi = lo-min(lo, reach), hi+reach
	var images []*patch.Image
	for _, f := range t.proc.code.Files(lo, hi) {
		images = append(images, f.Image)
		u64(uint64(len(images)))
		u64(f.Start)
		u64(f.End)
		u64(f.Offset)
	}
	b = append(b, 's')
	t.proc.code.SitesIn(lo, hi, func(addr uint64, op patch.Op) { u64(addr); b = append(b, byte(op)) })
	// The images by address, apart from the rest.
	b = append(b, 'i')
	for _, im := range images {
		u64(uint64(uintptr(unsafe.Pointer(im))))
	}
	return string(b), images
}

// keepPlan keeps the plan just made under key.
func (s *Session) keepPlan(key string) {
	if s.plans == nil {
		s.plans = map[string]*replayPlan{}
	}
	if len(s.plans) < maxPlans {
		s.plans[key] = s.planning
	}
}

// applyPlan does plan pl in t's process, for e.
func (s *Session) applyPlan(t *rthread, e *trace.Event, pl *replayPlan) error {
	m := t.proc.mem
	for _, op := range pl.ops {
		switch op.kind {
		case opMap:
			if err := s.mapStubPage(t, e, trace.HookPatch{Page: op.addr}); err != nil {
				return err
			}
		case opWrite:
			if _, err := m.WriteAt(op.data, op.addr); err != nil {
				return err
			}
		case opForget:
			t.proc.code.Forget(op.addr)
		case opRemember:
			t.proc.code.Remember(op.addr, op.data)
		}
	}
	s.plansUsed++
	return nil
}
