package patch

import (
	"bytes"
	"debug/elf"
	"sort"
	"sync"
)

// span is a range of addresses [start, end).
type span struct{ start, end uint64 }

// codeSection is a part of a file that holds code: where it is in the file
// and at what address it is linked.
type codeSection struct {
	vaddr, offset, size uint64
}

// Layout is what an ELF file says about where its instructions start: its
// code sections (or executable segments) and the bounds of its functions,
// from the symbol tables and the unwind tables (.eh_frame describes static
// functions too, which stripped libraries keep). Addresses are link-time
// ones.
type Layout struct {
	sections []codeSection
	funcs    []span
}

// ParseLayout reads the code layout of an x86-64 ELF file; nil when data is
// not one (then mappings of it are swept linearly).
func ParseLayout(data []byte) *Layout {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil || f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_X86_64 {
		return nil
	}
	defer f.Close()
	l := &Layout{}
	for _, s := range f.Sections {
		if s.Type == elf.SHT_PROGBITS && s.Flags&elf.SHF_EXECINSTR != 0 && s.Flags&elf.SHF_ALLOC != 0 && s.Size > 0 {
			l.sections = append(l.sections, codeSection{s.Addr, s.Offset, s.Size})
		}
	}
	if len(l.sections) == 0 {
		// No section headers: the executable segments are the code.
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && p.Filesz > 0 {
				l.sections = append(l.sections, codeSection{p.Vaddr, p.Off, p.Filesz})
			}
		}
	}
	add := func(syms []elf.Symbol) {
		for _, s := range syms {
			typ := elf.ST_TYPE(s.Info)
			if (typ == elf.STT_FUNC || typ == elf.STT_GNU_IFUNC) && s.Size > 0 && s.Value != 0 &&
				s.Section != elf.SHN_UNDEF {
				l.funcs = append(l.funcs, span{s.Value, s.Value + s.Size})
			}
		}
	}
	if syms, err := f.Symbols(); err == nil {
		add(syms)
	}
	if syms, err := f.DynamicSymbols(); err == nil {
		add(syms)
	}
	if s := f.Section(".eh_frame"); s != nil && s.Type == elf.SHT_PROGBITS {
		if data, err := s.Data(); err == nil {
			fdes, _ := fdeRanges(data, s.Addr) // what was read before an error stands
			l.funcs = append(l.funcs, fdes...)
		}
	}
	sort.Slice(l.funcs, func(i, j int) bool {
		if l.funcs[i].start != l.funcs[j].start {
			return l.funcs[i].start < l.funcs[j].start
		}
		return l.funcs[i].end < l.funcs[j].end
	})
	l.funcs = compactSpans(l.funcs)
	return l
}

// compactSpans drops duplicates from a sorted list.
func compactSpans(s []span) []span {
	out := s[:0]
	for i, x := range s {
		if i > 0 && x == s[i-1] {
			continue
		}
		out = append(out, x)
	}
	return out
}

// Image is a mapped file whose layout is parsed the first time a mapping of
// it holds a candidate instruction (most never do).
type Image struct {
	load   func() ([]byte, error)
	once   sync.Once
	layout *Layout
}

// NewImage returns an image whose bytes load returns when first needed.
func NewImage(load func() ([]byte, error)) *Image {
	return &Image{load: load}
}

// Layout returns the file's layout, nil if it is not an ELF file or cannot
// be read.
func (im *Image) Layout() *Layout {
	if im == nil {
		return nil
	}
	im.once.Do(func() {
		if data, err := im.load(); err == nil {
			im.layout = ParseLayout(data)
		}
		im.load = nil
	})
	return im.layout
}

// sweepPlan returns where decoding may start in a mapping of the file at
// addr, holding the file's bytes from offset for length bytes: each function
// (decoded from its start to its end), then what of each code section no
// function covers, swept from where the section or a function ends (a
// function's end is followed by padding, which decodes). Parts of sections
// this mapping does not hold, or holds at another place than their link
// address implies, are left out.
func (l *Layout) sweepPlan(addr, offset, length uint64) []span {
	var plan []span
	for _, sec := range l.sections {
		// Where the section's bytes are in this mapping, if they are.
		lo, hi := max(sec.offset, offset), min(sec.offset+sec.size, offset+length)
		if lo >= hi {
			continue
		}
		bias := addr + (sec.offset - offset) - sec.vaddr // runtime = link + bias
		vlo, vhi := sec.vaddr+(lo-sec.offset), sec.vaddr+(hi-sec.offset)
		// Functions starting inside the held part of the section. cover
		// is how far they reach; known says that cover is an instruction
		// boundary (a function's end, or the section's start).
		i := sort.Search(len(l.funcs), func(i int) bool { return l.funcs[i].start >= vlo })
		cover, known := vlo, lo == sec.offset
		for ; i < len(l.funcs) && l.funcs[i].start < vhi; i++ {
			f := l.funcs[i]
			if f.start > cover && known {
				plan = append(plan, span{cover + bias, f.start + bias})
			}
			plan = append(plan, span{f.start + bias, min(f.end, vhi) + bias})
			if f.end > cover {
				cover, known = f.end, true
			}
		}
		if cover < vhi && known {
			plan = append(plan, span{cover + bias, vhi + bias})
		}
	}
	return plan
}
