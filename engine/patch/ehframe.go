package patch

import (
	"encoding/binary"
	"errors"
)

// DWARF exception-header pointer encodings (DW_EH_PE_*).
const (
	peAbsptr  = 0x00
	peUleb128 = 0x01
	peUdata2  = 0x02
	peUdata4  = 0x03
	peUdata8  = 0x04
	peSleb128 = 0x09
	peSdata2  = 0x0a
	peSdata4  = 0x0b
	peSdata8  = 0x0c
	pePcrel   = 0x10
	peOmit    = 0xff
)

var errEHFrame = errors.New("malformed .eh_frame")

// ehReader reads one .eh_frame section loaded at vaddr.
type ehReader struct {
	data  []byte
	vaddr uint64
	pos   int
}

func (r *ehReader) need(n int) error {
	if n < 0 || r.pos+n > len(r.data) {
		return errEHFrame
	}
	return nil
}

func (r *ehReader) u8() (byte, error) {
	if err := r.need(1); err != nil {
		return 0, err
	}
	r.pos++
	return r.data[r.pos-1], nil
}

func (r *ehReader) uleb() (uint64, error) {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		c, err := r.u8()
		if err != nil {
			return 0, err
		}
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		if c&0x80 == 0 {
			return v, nil
		}
	}
}

func (r *ehReader) sleb() (int64, error) {
	var v int64
	var shift uint
	for {
		c, err := r.u8()
		if err != nil {
			return 0, err
		}
		if shift < 64 {
			v |= int64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v, nil
		}
	}
}

// fixed reads an n-byte little-endian value (n is 2, 4 or 8), sign-extended
// when signed.
func (r *ehReader) fixed(n int, signed bool) (uint64, error) {
	if err := r.need(n); err != nil {
		return 0, err
	}
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(r.data[r.pos+i])
	}
	r.pos += n
	if shift := 64 - 8*uint(n); signed && shift > 0 {
		v = uint64(int64(v<<shift) >> shift)
	}
	return v, nil
}

// pointer reads a value in encoding enc. With apply, a pc-relative value is
// made absolute (pc_begin); pc_range is read without.
func (r *ehReader) pointer(enc byte, apply bool) (uint64, error) {
	at := r.vaddr + uint64(r.pos)
	var v uint64
	var err error
	switch enc & 0x0f {
	case peAbsptr, peUdata8, peSdata8:
		v, err = r.fixed(8, false)
	case peUdata4:
		v, err = r.fixed(4, false)
	case peSdata4:
		v, err = r.fixed(4, true)
	case peUdata2:
		v, err = r.fixed(2, false)
	case peSdata2:
		v, err = r.fixed(2, true)
	case peUleb128:
		v, err = r.uleb()
	case peSleb128:
		var s int64
		s, err = r.sleb()
		v = uint64(s)
	default:
		return 0, errEHFrame
	}
	if err != nil {
		return 0, err
	}
	if apply {
		switch enc & 0x70 {
		case 0:
		case pePcrel:
			v += at
		default:
			// textrel, datarel and funcrel do not occur in x86-64
			// .eh_frame: give up rather than guess a base.
			return 0, errEHFrame
		}
	}
	return v, nil
}

// fdeRanges returns the code ranges of the FDEs of an .eh_frame section
// (data loaded at vaddr): one per function compiled with unwind tables,
// static ones included, which is what a stripped library still says about
// its functions' bounds.
func fdeRanges(data []byte, vaddr uint64) ([]span, error) {
	r := &ehReader{data: data, vaddr: vaddr}
	fdeEnc := map[int]byte{} // CIE offset → its FDE pointer encoding
	var out []span
	for r.pos+4 <= len(data) {
		start := r.pos
		length := uint64(binary.LittleEndian.Uint32(data[r.pos:]))
		r.pos += 4
		if length == 0 {
			break // the terminator
		}
		if length == 0xffffffff {
			if err := r.need(8); err != nil {
				return out, err
			}
			length = binary.LittleEndian.Uint64(data[r.pos:])
			r.pos += 8
		}
		body := r.pos
		if length > uint64(len(data)-body) {
			return out, errEHFrame
		}
		end := body + int(length)
		if err := r.need(4); err != nil {
			return out, err
		}
		id := binary.LittleEndian.Uint32(data[r.pos:])
		r.pos += 4
		if id == 0 {
			enc, err := r.cie(end)
			if err != nil {
				return out, err
			}
			fdeEnc[start] = enc
		} else {
			cie := body - int(id)
			enc, ok := fdeEnc[cie]
			if !ok {
				return out, errEHFrame
			}
			lo, err := r.pointer(enc, true)
			if err != nil {
				return out, err
			}
			n, err := r.pointer(enc&0x0f, false)
			if err != nil {
				return out, err
			}
			if lo != 0 && n != 0 {
				out = append(out, span{start: lo, end: lo + n})
			}
		}
		r.pos = end
	}
	return out, nil
}

// cie reads a CIE's body up to end and returns its FDE pointer encoding
// (the 'R' of its augmentation; absolute 8-byte pointers without one).
func (r *ehReader) cie(end int) (byte, error) {
	version, err := r.u8()
	if err != nil {
		return 0, err
	}
	augStart := r.pos
	for r.pos < end && r.data[r.pos] != 0 {
		r.pos++
	}
	aug := string(r.data[augStart:r.pos])
	r.pos++ // the NUL
	// Code and data alignment factors, then the return address register.
	if _, err := r.uleb(); err != nil {
		return 0, err
	}
	if _, err := r.sleb(); err != nil {
		return 0, err
	}
	if version == 1 {
		_, err = r.u8()
	} else {
		_, err = r.uleb()
	}
	if err != nil {
		return 0, err
	}
	enc := byte(peAbsptr)
	if len(aug) == 0 || aug[0] != 'z' {
		return enc, nil
	}
	if _, err := r.uleb(); err != nil { // augmentation data length
		return 0, err
	}
	for _, c := range aug[1:] {
		switch c {
		case 'R':
			if enc, err = r.u8(); err != nil {
				return 0, err
			}
		case 'L':
			if _, err := r.u8(); err != nil {
				return 0, err
			}
		case 'P':
			penc, err := r.u8()
			if err != nil {
				return 0, err
			}
			if _, err := r.pointer(penc&0x7f, false); err != nil {
				return 0, err
			}
		case 'S', 'B':
		default:
			return enc, nil // unknown: the FDE encoding read so far stands
		}
	}
	if enc == peOmit {
		return 0, errEHFrame
	}
	return enc, nil
}
