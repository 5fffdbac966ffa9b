package replay

import "container/list"

// blobCacheBytes bounds the stored files a replay keeps decompressed.
// Each process of a tree maps the same loader, libc and shell, several
// times each (a reservation, then a segment at a time); decompressing
// them again for every mapping made the replay of 200 `sh -c` runs spend
// more time in zstd than in the programs. Beyond the bound the least
// recently used are dropped and read again when needed.
const blobCacheBytes = 128 << 20

// blobCache holds decompressed blobs, least recently used first out.
type blobCache struct {
	bytes int
	order *list.List // of *blobEntry, most recent at the front
	byID  map[uint32]*list.Element
}

type blobEntry struct {
	id   uint32
	data []byte
}

// get returns blob id if it is held, marking it used.
func (c *blobCache) get(id uint32) ([]byte, bool) {
	el, ok := c.byID[id]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*blobEntry).data, true
}

// put holds data as blob id, dropping the least recently used beyond the
// bound (a blob larger than the bound is not held).
func (c *blobCache) put(id uint32, data []byte) {
	if len(data) > blobCacheBytes {
		return
	}
	if c.byID == nil {
		c.byID, c.order = map[uint32]*list.Element{}, list.New()
	}
	if _, ok := c.byID[id]; ok {
		return
	}
	c.byID[id] = c.order.PushFront(&blobEntry{id: id, data: data})
	c.bytes += len(data)
	for c.bytes > blobCacheBytes {
		el := c.order.Back()
		e := el.Value.(*blobEntry)
		c.order.Remove(el)
		delete(c.byID, e.id)
		c.bytes -= len(e.data)
	}
}
