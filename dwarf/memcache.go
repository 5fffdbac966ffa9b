package dwarf

// pageCache serves the many small reads of one rendering from whole pages,
// so formatting a struct or an array reads the target once per page.
type pageCache struct {
	mem   Memory
	pages map[uint64][]byte // nil entry: the page is unreadable
}

const cachePage = 4096

func newPageCache(mem Memory) Memory {
	if mem == nil {
		return nil
	}
	if _, ok := mem.(*pageCache); ok {
		return mem
	}
	return &pageCache{mem: mem, pages: map[uint64][]byte{}}
}

func (c *pageCache) ReadAt(p []byte, addr uint64) (int, error) {
	if len(p) > 64*cachePage || len(c.pages) > 4096 {
		return c.mem.ReadAt(p, addr)
	}
	n := 0
	for n < len(p) {
		a := addr + uint64(n)
		base := a &^ (cachePage - 1)
		page, ok := c.pages[base]
		if !ok {
			buf := make([]byte, cachePage)
			if got, err := c.mem.ReadAt(buf, base); got == cachePage && err == nil {
				page = buf
			}
			c.pages[base] = page
		}
		if page == nil {
			// Pages can be partly readable for some Memory kinds (a byte
			// slice); ask for the exact bytes.
			got, err := c.mem.ReadAt(p[n:], a)
			return n + got, err
		}
		n += copy(p[n:], page[a-base:])
	}
	return n, nil
}
