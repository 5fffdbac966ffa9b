package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/rewind-debugger/rewind/engine/internal/prefault"
)

// Presence bits of an encoded event, in encoding order. The fields a
// KindSyscall event nearly always has come first, so that its presence mask
// fits in one byte.
const (
	pTime = 1 << iota
	pTid
	pRegs
	pExitRegs
	pSyscall
	pFlags
	pMem
	pIn
	pMap
	pData
	pHash
	pSigno
	pSiginfo
	pValue
	pAux
	pStackHash
	pStatus
	pNewTid
	pShared
	pHooks
	pImage

	pAll = 1<<iota - 1
)

// regOrder maps a bit of a register mask to a Regs index: the registers that
// change most often between two events of a thread get the low bits.
var regOrder = [len(Regs{})]uint8{
	RAX, RIP, RCX, R11, OrigRAX, RDX, RSI, RDI, R10, R8, R9, RSP, RBP, RBX,
	R12, R13, R14, R15, EFLAGS, FSBase, GSBase, CS, SS, DS, ES, FS, GS,
}

// codec is the delta state shared by consecutive events. The encoder and the
// decoder keep identical copies of it.
type codec struct {
	time  int64
	tid   int32
	value uint64
	regs  map[int32]*Regs
	// last is regs[tid] for the thread of the last event (nil when it
	// has none): most events follow one of the same thread.
	last *Regs
	// slab holds the events decodeEvent returns next: one allocation for
	// many (each of ~700 bytes with pointers was a third of a replay's
	// decoding).
	slab []Event
}

// slabEvents is how many events a slab holds.
const slabEvents = 64

// newEvent is a zero Event from the slab.
func (c *codec) newEvent() *Event {
	if len(c.slab) == 0 {
		c.slab = make([]Event, slabEvents)
	}
	e := &c.slab[0]
	c.slab = c.slab[1:]
	return e
}

func newCodec() *codec { return &codec{regs: make(map[int32]*Regs)} }

// zeroRegs is the delta base of a thread's first event.
var zeroRegs Regs

// base returns the thread's current delta base (zero for a new thread),
// which the caller does not change.
func (c *codec) base(tid int32) *Regs {
	if tid == c.tid && c.last != nil {
		return c.last
	}
	if r := c.regs[tid]; r != nil {
		return r
	}
	return &zeroRegs
}

// update records the state after event e.
func (c *codec) update(e *Event, hasRegs bool) {
	same := e.Tid == c.tid
	c.time = e.Time
	c.tid = e.Tid
	if e.Value != 0 {
		c.value = e.Value
	}
	switch {
	case e.Kind == KindThreadExit:
		delete(c.regs, e.Tid)
		c.last = nil
	case hasRegs:
		r := c.last
		if !same || r == nil {
			if r = c.regs[e.Tid]; r == nil {
				r = new(Regs)
				c.regs[e.Tid] = r
			}
		}
		*r = e.Regs
		c.last = r
	case !same:
		c.last = c.regs[e.Tid]
	}
}

// appendEvent appends the encoding of e to b and advances the state.
func (c *codec) appendEvent(b []byte, e *Event) []byte {
	var p uint64
	if e.Time != c.time {
		p |= pTime
	}
	hasRegs := e.Regs != Regs{}
	if hasRegs {
		p |= pRegs
	}
	if e.ExitRegs != (Regs{}) {
		p |= pExitRegs
	}
	if e.Syscall != 0 {
		p |= pSyscall
	}
	if e.Tid != c.tid {
		p |= pTid
	}
	if e.Flags != 0 {
		p |= pFlags
	}
	if len(e.Mem) > 0 {
		p |= pMem
	}
	if len(e.In) > 0 {
		p |= pIn
	}
	if e.Map != nil {
		p |= pMap
	}
	if len(e.Data) > 0 {
		p |= pData
	}
	if e.Hash != 0 {
		p |= pHash
	}
	if e.Signo != 0 {
		p |= pSigno
	}
	if len(e.Siginfo) > 0 {
		p |= pSiginfo
	}
	if e.Value != 0 {
		p |= pValue
	}
	if e.Aux != 0 {
		p |= pAux
	}
	if e.StackHash != 0 {
		p |= pStackHash
	}
	if e.Status != 0 {
		p |= pStatus
	}
	if e.NewTid != 0 {
		p |= pNewTid
	}
	if e.Shared != nil {
		p |= pShared
	}
	if len(e.Hooks) > 0 {
		p |= pHooks
	}
	if len(e.Image) > 0 {
		p |= pImage
	}

	b = append(b, byte(e.Kind))
	b = binary.AppendUvarint(b, p)
	if p&pTime != 0 {
		b = binary.AppendVarint(b, e.Time-c.time)
	}
	if p&pTid != 0 {
		b = binary.AppendVarint(b, int64(e.Tid))
	}
	base := c.base(e.Tid)
	if p&pRegs != 0 {
		b = appendRegs(b, &e.Regs, base)
		base = &e.Regs
	}
	if p&pExitRegs != 0 {
		b = appendRegs(b, &e.ExitRegs, base)
	}
	if p&pSyscall != 0 {
		b = binary.AppendVarint(b, int64(e.Syscall))
	}
	if p&pFlags != 0 {
		b = binary.AppendUvarint(b, uint64(e.Flags))
	}
	if p&pMem != 0 {
		b = appendMems(b, e.Mem)
	}
	if p&pIn != 0 {
		b = appendMems(b, e.In)
	}
	if p&pMap != 0 {
		b = binary.AppendUvarint(b, uint64(e.Map.Blob))
		b = binary.AppendUvarint(b, e.Map.Offset)
		b = binary.AppendUvarint(b, e.Map.Length)
		b = appendBytes(b, []byte(e.Map.Path))
	}
	if p&pData != 0 {
		b = appendBytes(b, e.Data)
	}
	if p&pHash != 0 {
		b = binary.LittleEndian.AppendUint64(b, e.Hash)
	}
	if p&pSigno != 0 {
		b = binary.AppendVarint(b, int64(e.Signo))
	}
	if p&pSiginfo != 0 {
		b = appendBytes(b, e.Siginfo)
	}
	if p&pValue != 0 {
		b = binary.AppendVarint(b, int64(e.Value-c.value))
	}
	if p&pAux != 0 {
		b = binary.AppendUvarint(b, e.Aux)
	}
	if p&pStackHash != 0 {
		b = binary.LittleEndian.AppendUint64(b, e.StackHash)
	}
	if p&pStatus != 0 {
		b = binary.AppendVarint(b, int64(e.Status))
	}
	if p&pNewTid != 0 {
		b = binary.AppendVarint(b, int64(e.NewTid))
	}
	if p&pShared != 0 {
		b = binary.AppendUvarint(b, uint64(e.Shared.Object))
		b = binary.AppendUvarint(b, e.Shared.Offset)
		b = binary.AppendUvarint(b, e.Shared.Size)
		b = appendBytes(b, []byte(e.Shared.Path))
	}
	if p&pHooks != 0 {
		b = binary.AppendUvarint(b, uint64(len(e.Hooks)))
		for _, h := range e.Hooks {
			b = binary.AppendUvarint(b, h.Site)
			b = binary.AppendUvarint(b, h.Stub)
			b = binary.AppendUvarint(b, h.Page)
			b = binary.AppendUvarint(b, uint64(h.Nr))
		}
	}
	if p&pImage != 0 {
		b = appendBytes(b, e.Image)
	}
	c.update(e, hasRegs)
	return b
}

func appendRegs(b []byte, r, base *Regs) []byte {
	// One pass for the differences, then one varint each: a buffered
	// call's exit differs from its entry in rax alone.
	var diff [len(regOrder)]uint64
	var mask uint64
	for i, ri := range regOrder {
		if d := r[ri%uint8(len(r))] - base[ri%uint8(len(base))]; d != 0 {
			diff[i] = d
			mask |= 1 << i
		}
	}
	b = binary.AppendUvarint(b, mask)
	for m := mask; m != 0; m &= m - 1 {
		b = binary.AppendVarint(b, int64(diff[bits.TrailingZeros64(m)%len(diff)]))
	}
	return b
}

func appendMems(b []byte, ms []Mem) []byte {
	b = binary.AppendUvarint(b, uint64(len(ms)))
	for _, m := range ms {
		b = binary.AppendUvarint(b, m.Addr)
		b = appendBytes(b, m.Data)
	}
	return b
}

func appendBytes(b, data []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(data)))
	return append(b, data...)
}

// errShort is the decoding error for a payload that ends inside an event.
var errShort = errors.New("event data ends early")

// dec reads encoded events from one frame payload. The first error sticks.
type dec struct {
	b   []byte
	err error
}

func (d *dec) uvarint() uint64 { return decVarint(d, binary.Uvarint) }

func (d *dec) varint() int64 { return decVarint(d, binary.Varint) }

// decVarint reads the next varint with read (binary.Uvarint or
// binary.Varint), which says as they do how many bytes it took.
func decVarint[T uint64 | int64](d *dec, read func([]byte) (T, int)) T {
	if d.err != nil {
		return 0
	}
	v, n := read(d.b)
	if n <= 0 {
		d.fail(errShort, n)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) fail(err error, n int) {
	if n < 0 {
		err = errors.New("varint overflows 64 bits")
	}
	d.err = err
}

func (d *dec) u64() uint64 {
	if b := d.next(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (d *dec) u8() byte {
	if b := d.next(1); b != nil {
		return b[0]
	}
	return 0
}

// next takes the next n bytes, or nil where fewer are left.
func (d *dec) next(n int) []byte {
	if d.err != nil {
		return nil
	}
	if len(d.b) < n {
		d.err = errShort
		return nil
	}
	b := d.b[:n]
	d.b = d.b[n:]
	return b
}

func (d *dec) int32(v int64, what string) int32 {
	if d.err == nil && int64(int32(v)) != v {
		d.err = fmt.Errorf("%s %d out of range", what, v)
	}
	return int32(v)
}

// uint32 narrows v to 32 bits; a larger v is an error, which says what
// (a format of v: "blob id %d").
func (d *dec) uint32(v uint64, what string) uint32 {
	if d.err == nil && v > 1<<32-1 {
		d.err = fmt.Errorf(what+" out of range", v)
	}
	return uint32(v)
}

// bytes returns a copy of the next length-prefixed byte string (nil if empty).
func (d *dec) bytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = errShort
		return nil
	}
	if n == 0 {
		return nil
	}
	out := append(prefault.Bytes(int(n)), d.b[:n]...) // big: backed at once
	d.b = d.b[n:]
	return out
}

func (d *dec) mems() []Mem {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	// Each entry takes at least two bytes: bound the allocation by the data.
	if n == 0 || n > uint64(len(d.b))/2 {
		d.err = fmt.Errorf("bad memory range count %d", n)
		return nil
	}
	ms := make([]Mem, n)
	for i := range ms {
		ms[i].Addr = d.uvarint()
		ms[i].Data = d.bytes()
	}
	return ms
}

func (d *dec) regs(r, base *Regs) {
	mask := d.uvarint()
	if d.err == nil && mask>>len(regOrder) != 0 {
		d.err = fmt.Errorf("bad register mask %#x", mask)
	}
	*r = *base
	if d.err != nil {
		return
	}
	for m := mask; m != 0; m &= m - 1 {
		ri := regOrder[bits.TrailingZeros64(m)%len(regOrder)] % uint8(len(r))
		r[ri] = base[ri] + uint64(d.varint())
	}
}

// decodeEvent decodes the next event of d and advances the state. On error
// (d.err set) it returns nil and the state is no longer usable.
func (c *codec) decodeEvent(d *dec) *Event {
	e := c.newEvent()
	e.Kind = Kind(d.u8())
	p := d.uvarint()
	if d.err != nil {
		return nil
	}
	if p&^pAll != 0 {
		d.err = fmt.Errorf("unknown field bits %#x", p&^pAll)
		return nil
	}
	e.Time = c.time
	if p&pTime != 0 {
		e.Time += d.varint()
	}
	e.Tid = c.tid
	if p&pTid != 0 {
		e.Tid = d.int32(d.varint(), "tid")
	}
	base := c.base(e.Tid)
	if p&pRegs != 0 {
		d.regs(&e.Regs, base)
		base = &e.Regs
	}
	if p&pExitRegs != 0 {
		d.regs(&e.ExitRegs, base)
	}
	if p&pSyscall != 0 {
		e.Syscall = d.int32(d.varint(), "syscall")
	}
	if p&pFlags != 0 {
		e.Flags = d.uint32(d.uvarint(), "flags %#x")
	}
	if p&pMem != 0 {
		e.Mem = d.mems()
	}
	if p&pIn != 0 {
		e.In = d.mems()
	}
	if p&pMap != 0 {
		e.Map = &MapFile{Blob: d.uint32(d.uvarint(), "blob id %d"), Offset: d.uvarint(), Length: d.uvarint()}
		e.Map.Path = string(d.bytes())
	}
	if p&pData != 0 {
		e.Data = d.bytes()
	}
	if p&pHash != 0 {
		e.Hash = d.u64()
	}
	if p&pSigno != 0 {
		e.Signo = d.int32(d.varint(), "signal")
	}
	if p&pSiginfo != 0 {
		e.Siginfo = d.bytes()
	}
	if p&pValue != 0 {
		e.Value = c.value + uint64(d.varint())
	}
	if p&pAux != 0 {
		e.Aux = d.uvarint()
	}
	if p&pStackHash != 0 {
		e.StackHash = d.u64()
	}
	if p&pStatus != 0 {
		e.Status = d.int32(d.varint(), "status")
	}
	if p&pNewTid != 0 {
		e.NewTid = d.int32(d.varint(), "new tid")
	}
	if p&pShared != 0 {
		e.Shared = &SharedMap{Object: d.uint32(d.uvarint(), "shared object %d"), Offset: d.uvarint(), Size: d.uvarint()}
		e.Shared.Path = string(d.bytes())
	}
	if p&pHooks != 0 {
		n := d.uvarint()
		if d.err == nil && n > maxHooks {
			d.err = fmt.Errorf("%d hook sites in one event", n)
		}
		for i := uint64(0); i < n && d.err == nil; i++ {
			h := HookPatch{Site: d.uvarint(), Stub: d.uvarint(), Page: d.uvarint()}
			h.Nr = uint32(d.uvarint())
			e.Hooks = append(e.Hooks, h)
		}
	}
	if p&pImage != 0 {
		e.Image = d.bytes()
	}
	if d.err != nil {
		return nil
	}
	c.update(e, p&pRegs != 0)
	return e
}
