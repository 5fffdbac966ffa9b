package dwarf

import "debug/elf"

// SectionAt names the allocated ELF section that holds a run-time address
// (gdb's info symbol says "in section .bss").
func (img *Image) SectionAt(addr uint64) (string, bool) {
	if img.file == nil {
		return "", false
	}
	a := addr - img.Bias
	for _, s := range img.file.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Size == 0 {
			continue
		}
		if a >= s.Addr && a < s.Addr+s.Size {
			return s.Name, true
		}
	}
	return "", false
}

// TextRange is the run-time address range of the image's .text section:
// what gdb's info sharedlibrary shows as From and To.
func (img *Image) TextRange() (lo, hi uint64, ok bool) {
	if img.file == nil {
		return 0, 0, false
	}
	s := img.file.Section(".text")
	if s == nil {
		return 0, 0, false
	}
	return s.Addr + img.Bias, s.Addr + s.Size + img.Bias, true
}

// HasDebugInfo says whether the image has DWARF, in its file or in a
// separate debug file.
func (img *Image) HasDebugInfo() bool { return img.DebugPath != "" }
