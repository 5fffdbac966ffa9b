package replay

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

// forget drops the names of [start, end): unmapped, or mapped anew. It
// works in place: git's replay made 5000 munmaps, each of which copied
// the names into a new slice.
func (n *mapNames) forget(start, end uint64) {
	s := *n
	w := 0
	var split *Mapping // the tail of the one name that holds all of [start, end)
	for _, m := range s {
		if m.End <= start || m.Start >= end {
			s[w] = m
			w++
			continue
		}
		head := m.Start < start
		if head {
			s[w] = Mapping{Start: m.Start, End: start, Offset: m.Offset, Path: m.Path}
			w++
		}
		if m.End > end {
			tail := Mapping{Start: end, End: m.End, Offset: m.Offset + (end - m.Start), Path: m.Path}
			if head {
				split = &tail // its slot may not be read yet
			} else {
				s[w] = tail
				w++
			}
		}
	}
	clear(s[w:]) // no paths kept alive past the end
	*n = s[:w]
	if split != nil {
		*n = append(*n, *split)
	}
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
