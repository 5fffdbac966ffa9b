package dwarf

// This file reads location lists: .debug_loc (DWARF 2-4) and
// .debug_loclists (DWARF 5, DW_LLE_* entries), and chooses the expression
// of an attribute valid at a pc (LocationExpr). They are read here rather
// than with delve's loclist package for two reasons. gdb, whose answers
// rewind's must equal, takes an entry with an empty address range
// [pc, pc) as valid at the entry pc of a function, where gcc's location
// views put the arguments of a call inlined there; delve's readers skip
// such entries. And delve's readers index their input unchecked, while the
// debug information of any binary is untrusted input: every read here is
// bounds-checked and a malformed list is an error, never a panic.

import (
	"debug/dwarf"
	"encoding/binary"
	"errors"
	"fmt"
)

// DW_LLE_* kinds of a .debug_loclists entry (DWARF 5 section 7.7.3), and
// gcc's DW_LLE_GNU_view_pair (-gvariable-location-views=incompat5).
const (
	lleEndOfList       = 0x00
	lleBaseAddressx    = 0x01
	lleStartxEndx      = 0x02
	lleStartxLength    = 0x03
	lleOffsetPair      = 0x04
	lleDefaultLocation = 0x05
	lleBaseAddress     = 0x06
	lleStartEnd        = 0x07
	lleStartLength     = 0x08
	lleGNUViewPair     = 0x09
)

// errLocList is wrapped by every error about a malformed location list.
var errLocList = errors.New("malformed location list")

// locListEntry is one entry of a location list that holds a location: its
// link-time address range [low, high), which may be empty, and its
// location expression (empty: the object has no location there).
type locListEntry struct {
	low, high uint64
	expr      []byte
}

// locListReader reads the location lists of one compilation unit.
type locListReader struct {
	// data is .debug_loc for version < 5, .debug_loclists for 5.
	data     []byte
	version  int
	addrSize int // 4 or 8
	// base is the unit's base address (its DW_AT_low_pc), to which the
	// offsets of .debug_loc entries and DW_LLE_offset_pair are relative
	// until a base address entry changes it.
	base uint64
	// addr returns entry idx of the unit's .debug_addr table, for the
	// DW_LLE_*x kinds; nil when the unit has none.
	addr func(idx uint64) (uint64, error)
}

// walk calls visit with the entries of the list at offset off in order,
// until visit returns true or the list ends. It returns the expression of
// the list's DW_LLE_default_location met before that (nil: none), which
// holds where no entry does.
func (lr *locListReader) walk(off uint64, visit func(locListEntry) bool) (def []byte, err error) {
	if lr.addrSize != 4 && lr.addrSize != 8 {
		return nil, fmt.Errorf("%w: address size %d", errLocList, lr.addrSize)
	}
	if off >= uint64(len(lr.data)) {
		return nil, fmt.Errorf("%w: offset %#x beyond the section (%#x bytes)", errLocList, off, len(lr.data))
	}
	r := &exprReader{b: lr.data[off:]}
	base := lr.base
	for {
		at := off + uint64(r.off)
		var e locListEntry
		var ok, end bool
		if lr.version < 5 {
			e, ok, end, base = lr.nextLoc(r, base)
		} else {
			var isDef bool
			e, ok, end, isDef, base, err = lr.nextLoclists(r, base)
			if err != nil {
				return nil, fmt.Errorf("%w: entry at %#x: %w", errLocList, at, err)
			}
			if isDef && r.err == nil {
				def = e.expr
				continue
			}
		}
		if r.err != nil {
			return nil, fmt.Errorf("%w: entry at %#x: %w", errLocList, at, r.err)
		}
		if end {
			return def, nil
		}
		if ok && visit(e) {
			return def, nil
		}
	}
}

// nextLoc reads one .debug_loc entry (DWARF 2-4): a pair of addresses,
// where all ones in the first selects a new base address (the second) and
// two zeros end the list; else the pair are offsets from the base and a
// 2-byte length and the expression follow.
func (lr *locListReader) nextLoc(r *exprReader, base uint64) (e locListEntry, ok, end bool, newBase uint64) {
	lo, hi := r.uint(lr.addrSize), r.uint(lr.addrSize)
	allOnes := ^uint64(0) >> (64 - 8*lr.addrSize)
	switch {
	case r.err != nil:
		return e, false, false, base
	case lo == allOnes:
		return e, false, false, hi
	case lo == 0 && hi == 0:
		return e, false, true, base
	}
	e.expr = r.bytes(r.uint(2))
	e.low, e.high = base+lo, base+hi
	return e, true, false, base
}

// nextLoclists reads one .debug_loclists entry (DWARF 5): its kind, its
// operands, and for the kinds that hold a location a ULEB128 length and
// the expression. isDef says it is a DW_LLE_default_location (e holds only
// its expression).
func (lr *locListReader) nextLoclists(r *exprReader, base uint64) (e locListEntry, ok, end, isDef bool, newBase uint64, err error) {
	newBase = base
	kind := r.u8()
	if r.err != nil {
		return e, false, false, false, base, nil
	}
	switch kind {
	case lleEndOfList:
		return e, false, true, false, base, nil
	case lleBaseAddressx:
		newBase, err = lr.addrx(r.uleb(), r)
		return e, false, false, false, newBase, err
	case lleBaseAddress:
		return e, false, false, false, r.uint(lr.addrSize), nil
	case lleGNUViewPair:
		// The views of the next entry: rewind reads no views, as gdb.
		r.uleb()
		r.uleb()
		return e, false, false, false, base, nil
	case lleStartxEndx:
		if e.low, err = lr.addrx(r.uleb(), r); err == nil {
			e.high, err = lr.addrx(r.uleb(), r)
		}
	case lleStartxLength:
		if e.low, err = lr.addrx(r.uleb(), r); err == nil {
			e.high = e.low + r.uleb()
		}
	case lleOffsetPair:
		e.low = base + r.uleb()
		e.high = base + r.uleb()
	case lleDefaultLocation:
		isDef = true
	case lleStartEnd:
		e.low = r.uint(lr.addrSize)
		e.high = r.uint(lr.addrSize)
	case lleStartLength:
		e.low = r.uint(lr.addrSize)
		e.high = e.low + r.uleb()
	default:
		return e, false, false, false, base, fmt.Errorf("unknown kind %#x", kind)
	}
	if err != nil {
		return e, false, false, false, base, err
	}
	e.expr = r.bytes(r.uleb())
	return e, !isDef, false, isDef, base, nil
}

// addrx reads entry idx of .debug_addr; nothing when r already failed
// (idx may be garbage then).
func (lr *locListReader) addrx(idx uint64, r *exprReader) (uint64, error) {
	if r.err != nil {
		return 0, nil
	}
	if lr.addr == nil {
		return 0, fmt.Errorf(".debug_addr index %d without a .debug_addr table", idx)
	}
	return lr.addr(idx)
}

// find returns the expression of the list at off that holds at link-time
// pc, by gdb's rule (dwarf2_find_location_expression, gdb/dwarf2/loc.c,
// gdb 13): the first entry in the list whose range holds pc or, when
// atEntry says that pc is the entry pc of the function it is in, whose
// range is empty and starts at pc. gcc gives such an empty range, told
// apart from the next ones by location views (which gdb 13 does not read),
// to the arguments of a call inlined at a function's first instruction,
// bound there before the call's code overwrites them. Without such an
// entry, the list's DW_LLE_default_location holds. found is false when
// nothing does; an empty expression found means no location either.
func (lr *locListReader) find(off, pc uint64, atEntry func() bool) (expr []byte, found bool, err error) {
	entry := -1 // atEntry's answer, asked once: -1 not yet, 0 no, 1 yes
	def, err := lr.walk(off, func(e locListEntry) bool {
		if e.low == e.high && e.low == pc {
			if entry < 0 {
				entry = 0
				if atEntry != nil && atEntry() {
					entry = 1
				}
			}
			if entry == 1 {
				expr, found = e.expr, true
				return true
			}
		}
		if pc >= e.low && pc < e.high {
			expr, found = e.expr, true
			return true
		}
		return false
	})
	if err != nil {
		return nil, false, err
	}
	if !found && def != nil {
		return def, true, nil
	}
	return expr, found, nil
}

// loclistxOffset resolves a DW_FORM_loclistx index: entry idx of the
// offsets table that starts at the unit's DW_AT_loclists_base in
// .debug_loclists (32-bit DWARF: 4-byte offsets, relative to that base).
func loclistxOffset(data []byte, loclistsBase, idx uint64) (uint64, error) {
	at := loclistsBase + 4*idx
	if idx > uint64(len(data))/4 || at < loclistsBase || at+4 > uint64(len(data)) {
		return 0, fmt.Errorf("%w: loclistx %d beyond .debug_loclists (%#x bytes) from base %#x", errLocList, idx, len(data), loclistsBase)
	}
	return loclistsBase + uint64(binary.LittleEndian.Uint32(data[at:])), nil
}

// unitHeader finds the header of the compilation unit whose DIE is at
// cuDIE: its .debug_info offset and DWARF version. Go's debug/dwarf hides
// both, but loclist forms and CU-relative references depend on them.
func (img *Image) unitHeader(cuDIE uint64) (hdr uint64, version int, err error) {
	info := img.Section(".debug_info")
	le := binary.LittleEndian
	// DWARF 5: unit_length(4) version(2) unit_type(1) address_size(1)
	// debug_abbrev_offset(4).
	if cuDIE >= 12 && cuDIE <= uint64(len(info)) {
		h := info[cuDIE-12:]
		if v := le.Uint16(h[4:]); v == 5 && h[7] == 8 {
			return cuDIE - 12, 5, nil
		}
	}
	// DWARF 2-4: unit_length(4) version(2) debug_abbrev_offset(4)
	// address_size(1).
	if cuDIE >= 11 && cuDIE <= uint64(len(info)) {
		h := info[cuDIE-11:]
		if v := le.Uint16(h[4:]); v >= 2 && v <= 4 && h[10] == 8 {
			return cuDIE - 11, int(v), nil
		}
	}
	return 0, 0, fmt.Errorf("no 32-bit DWARF unit header before the CU DIE at %#x in %s", cuDIE, img.DebugPath)
}

// unitEntry returns the CU DIE of the unit whose header is at hdr.
func (img *Image) unitEntry(hdr uint64) (*dwarf.Entry, error) {
	dw, err := img.DWARF()
	if err != nil {
		return nil, err
	}
	info := img.Section(".debug_info")
	if hdr+6 > uint64(len(info)) {
		return nil, fmt.Errorf("unit header %#x beyond .debug_info", hdr)
	}
	die := hdr + 11
	if binary.LittleEndian.Uint16(info[hdr+4:]) >= 5 {
		die = hdr + 12
	}
	r := dw.Reader()
	r.Seek(dwarf.Offset(die))
	e, err := r.Next()
	if err != nil || e == nil {
		return nil, fmt.Errorf("compilation unit at %#x: %v", hdr, err)
	}
	return e, nil
}

// UnitContext returns a context with the compilation unit's parts set:
// Image, AddrBase and CUOffset. The caller adds the frame's registers,
// CFA, frame base, memory and resolvers.
func (img *Image) UnitContext(cu *dwarf.Entry) (LocContext, error) {
	ctx := LocContext{Image: img}
	hdr, _, err := img.unitHeader(uint64(cu.Offset))
	if err != nil {
		return ctx, err
	}
	ctx.CUOffset = hdr
	ctx.AddrBase = cuAddrBase(cu)
	return ctx, nil
}

// Attributes debug/dwarf does not name.
const (
	attrGNUAddrBase         = dwarf.Attr(0x2133)
	attrGNUCallSiteValue    = dwarf.Attr(0x2111)
	attrGNUCallSiteDataVal  = dwarf.Attr(0x2112)
	attrCallDataValue       = dwarf.Attr(0x86)
	tagGNUCallSite          = dwarf.Tag(0x4109)
	tagGNUCallSiteParameter = dwarf.Tag(0x410a)
)

func cuAddrBase(cu *dwarf.Entry) uint64 {
	for _, a := range []dwarf.Attr{dwarf.AttrAddrBase, attrGNUAddrBase} {
		if v, ok := cu.Val(a).(int64); ok {
			return uint64(v)
		}
	}
	return 8 // after the .debug_addr header of the first unit
}

// LocationExpr returns the location expression of a DIE attribute valid
// at run-time pc: the exprloc itself, or the matching entry of a location
// list (.debug_loc for DWARF 2-4, .debug_loclists for DWARF 5, including
// DW_FORM_loclistx through the CU's DW_AT_loclists_base), chosen as gdb
// chooses it (see locListReader.find): an entry with an empty range at pc
// holds where pc is the entry of the function it is in, as the arguments
// of a call inlined there have. It returns ErrOptimizedOut when no entry
// holds at pc; an empty expression means the same for the caller of
// EvalLocation.
func (img *Image) LocationExpr(field *dwarf.Field, cu *dwarf.Entry, pc uint64) ([]byte, error) {
	if field == nil {
		return nil, fmt.Errorf("no location attribute: %w", ErrOptimizedOut)
	}
	switch field.Class {
	case dwarf.ClassExprLoc, dwarf.ClassBlock:
		b, _ := field.Val.([]byte)
		return b, nil
	case dwarf.ClassLocListPtr, dwarf.ClassLocList:
	default:
		return nil, fmt.Errorf("%v is a %v, not a location", field.Attr, field.Class)
	}
	if cu == nil {
		return nil, errors.New("location list without its compilation unit")
	}
	// Offsets come as int64, DW_FORM_loclistx indexes as uint64.
	var off uint64
	switch v := field.Val.(type) {
	case int64:
		if v < 0 {
			return nil, fmt.Errorf("%v has a negative offset %d in %s", field.Attr, v, img.DebugPath)
		}
		off = uint64(v)
	case uint64:
		off = v
	default:
		return nil, fmt.Errorf("%v has an unexpected value %T", field.Attr, field.Val)
	}
	_, version, err := img.unitHeader(uint64(cu.Offset))
	if err != nil {
		return nil, err
	}
	base, _ := cu.Val(dwarf.AttrLowpc).(uint64)
	lr := &locListReader{version: version, addrSize: 8, base: base}
	if version < 5 && field.Class == dwarf.ClassLocListPtr {
		lr.data = img.Section(".debug_loc")
		if lr.data == nil {
			return nil, fmt.Errorf("%s has no .debug_loc", img.DebugPath)
		}
	} else {
		lr.version = 5
		lr.data = img.Section(".debug_loclists")
		if lr.data == nil {
			return nil, fmt.Errorf("%s has no .debug_loclists", img.DebugPath)
		}
		if field.Class == dwarf.ClassLocList {
			lb := uint64(12) // after the header of the first unit's table
			if v, ok := cu.Val(dwarf.AttrLoclistsBase).(int64); ok && v >= 0 {
				lb = uint64(v)
			}
			if off, err = loclistxOffset(lr.data, lb, off); err != nil {
				return nil, fmt.Errorf("location list of %v in %s: %w", field.Attr, img.DebugPath, err)
			}
		}
		addrBase := cuAddrBase(cu)
		lr.addr = func(idx uint64) (uint64, error) { return img.debugAddr(addrBase, idx) }
	}
	// gdb's rule for an empty range at pc: it holds where pc is the entry
	// of the function pc is in (block_linkage_function of block_for_pc:
	// the concrete function, also inside inlined calls).
	atEntry := func() bool {
		fn := img.concreteAt(pc)
		return fn != nil && fn.Low == pc
	}
	expr, found, err := lr.find(off, pc-img.Bias, atEntry)
	if err != nil {
		return nil, fmt.Errorf("location list of %v in %s: %w", field.Attr, img.DebugPath, err)
	}
	if !found {
		return nil, fmt.Errorf("no location at pc %#x: %w", pc, ErrOptimizedOut)
	}
	return expr, nil
}
