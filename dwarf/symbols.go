// Package dwarf turns addresses into the program the user wrote. For now it
// reads ELF symbol tables (of the executable and of shared libraries, placed
// at their load addresses); line tables, unwinding and variables come next.
package dwarf

import (
	"debug/elf"
	"fmt"
	"sort"
)

// Symbol is a function or object symbol at its run-time address.
type Symbol struct {
	Name  string
	Addr  uint64
	Size  uint64
	Func  bool
	Image string // the ELF file it comes from
}

// Image is one loaded ELF file and its symbols.
type Image struct {
	Path    string
	Bias    uint64 // run-time address minus link-time address
	symbols []Symbol
}

// LoadImage reads the symbols of the ELF file at path, loaded so that file
// offset 0 is at base (the start of its first mapping).
func LoadImage(path string, base uint64) (*Image, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("symbols of %s: %w", path, err)
	}
	defer f.Close()
	img := &Image{Path: path}
	// The bias maps link addresses to run-time ones: for a PIE or a shared
	// library the first PT_LOAD links at vaddr and runs at base.
	if f.Type == elf.ET_DYN {
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD {
				img.Bias = base - (p.Vaddr - p.Off)
				break
			}
		}
	}
	add := func(syms []elf.Symbol) {
		for _, s := range syms {
			typ := elf.ST_TYPE(s.Info)
			if s.Value == 0 || s.Name == "" || (typ != elf.STT_FUNC && typ != elf.STT_OBJECT && typ != elf.STT_GNU_IFUNC) {
				continue
			}
			img.symbols = append(img.symbols, Symbol{Name: s.Name, Addr: s.Value + img.Bias, Size: s.Size,
				Func: typ != elf.STT_OBJECT, Image: path})
		}
	}
	if syms, err := f.Symbols(); err == nil {
		add(syms)
	}
	if syms, err := f.DynamicSymbols(); err == nil {
		add(syms)
	}
	sort.Slice(img.symbols, func(i, j int) bool { return img.symbols[i].Addr < img.symbols[j].Addr })
	return img, nil
}

// Lookup finds a symbol by name.
func (img *Image) Lookup(name string) (Symbol, bool) {
	for _, s := range img.symbols {
		if s.Name == name {
			return s, true
		}
	}
	return Symbol{}, false
}

// At returns the symbol containing addr.
func (img *Image) At(addr uint64) (Symbol, bool) {
	i := sort.Search(len(img.symbols), func(i int) bool { return img.symbols[i].Addr > addr }) - 1
	for ; i >= 0; i-- {
		s := img.symbols[i]
		if addr >= s.Addr && (addr < s.Addr+s.Size || (s.Size == 0 && addr-s.Addr < 4096)) {
			return s, true
		}
		if s.Size > 0 && addr >= s.Addr+s.Size && s.Func {
			break
		}
	}
	return Symbol{}, false
}

// Table is the symbols of every image of a process.
type Table struct {
	Images []*Image
}

// Lookup finds a symbol by name in any image, the executable first.
func (t *Table) Lookup(name string) (Symbol, bool) {
	for _, img := range t.Images {
		if s, ok := img.Lookup(name); ok {
			return s, true
		}
	}
	return Symbol{}, false
}

// At returns the symbol containing addr and the offset into it.
func (t *Table) At(addr uint64) (Symbol, uint64, bool) {
	for _, img := range t.Images {
		if s, ok := img.At(addr); ok {
			return s, addr - s.Addr, true
		}
	}
	return Symbol{}, 0, false
}
