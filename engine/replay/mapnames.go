package replay

import "slices"

// mapNames says which file the memory the replay rebuilt from the trace's
// copies stands for (the kernel sees anonymous memory or a memfd there:
// mapfile.go, shared.go), for Mappings and so for the debugger's symbols.
// Each name covers only what is still mapped from that file: an unmapped
// range loses it, and a range mapped anew takes the new one. (A library
// that dlopen maps where ld.so.cache was must not be named ld.so.cache:
// breakpoints on its functions would never resolve.)
type mapNames []Mapping

// add names m's range m.Path, in place of what named any of it before.
func (n *mapNames) add(m Mapping) {
	n.forget(m.Start, m.End)
	*n = append(*n, m)
}

// forget drops the names of [start, end): unmapped, or mapped anew.
func (n *mapNames) forget(start, end uint64) {
	if !slices.ContainsFunc(*n, func(m Mapping) bool { return m.Start < end && start < m.End }) {
		return
	}
	var out mapNames
	for _, m := range *n {
		if m.End <= start || m.Start >= end {
			out = append(out, m)
			continue
		}
		if m.Start < start {
			out = append(out, Mapping{Start: m.Start, End: start, Offset: m.Offset, Path: m.Path})
		}
		if m.End > end {
			out = append(out, Mapping{Start: end, End: m.End, Offset: m.Offset + (end - m.Start), Path: m.Path})
		}
	}
	*n = out
}

// at returns the name of the memory at addr: its file, and the offset in
// it that addr stands for.
func (n mapNames) at(addr uint64) (path string, offset uint64, ok bool) {
	for _, m := range n {
		if m.Start <= addr && addr < m.End {
			return m.Path, m.Offset + (addr - m.Start), true
		}
	}
	return "", 0, false
}

// pageEnd is the end of a mapping of length bytes at addr: the kernel maps
// and unmaps whole pages.
func pageEnd(addr, length uint64) uint64 { return addr + (length+pageSize-1)&^(pageSize-1) }
