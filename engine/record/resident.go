package record

// What a check compares. A shared object can be far larger than what it
// holds: a 100 GB MAP_NORESERVE anonymous region with two pages written, a
// sparse file of a terabyte. Reading every mapped page at every blocking
// call would never end (and reading an anonymous region through the
// program's memory would allocate its pages), so a check only reads the
// pages that can differ from replay's copy: those the object holds data in,
// and those replay's copy holds data in (they may have become holes again:
// a punched hole, a truncate). Everything else reads zero in both.

import (
	"encoding/binary"
	"errors"
	"os"
	"sort"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
)

// toCompare narrows the mapped page ranges of obj to those a check must
// read, sorted and merged.
func (sm *sharedMem) toCompare(p sharedProc, obj *sharedObject, ranges [][2]uint64) [][2]uint64 {
	var held [][2]uint64
	switch {
	case obj.file != nil && pagesIn(ranges) <= seekless:
		// Read whole: a hole reads zero, as it does in replay's copy.
		held = append(held, ranges...)
	case obj.file != nil:
		held = dataRanges(obj.file, ranges)
	default:
		held = sm.presentRanges(p, obj, ranges)
	}
	for idx := range obj.pages {
		if inRanges(ranges, idx) {
			held = append(held, [2]uint64{idx, idx + 1})
		}
	}
	return mergeRanges(held)
}

// seekless is the number of pages up to which a check reads a file's
// mapped pages whole rather than asks where its data is (SEEK_DATA and
// SEEK_HOLE, two calls a run): glibc's gconv-modules.cache, 7 pages that
// every process of a build maps, was a quarter of make's checks' cost.
const seekless = 64

// pagesIn counts the pages of ranges.
func pagesIn(ranges [][2]uint64) uint64 {
	var n uint64
	for _, rg := range ranges {
		n += rg[1] - rg[0]
	}
	return n
}

// inRanges reports whether page idx is in one of the sorted ranges.
func inRanges(ranges [][2]uint64, idx uint64) bool {
	i := sort.Search(len(ranges), func(i int) bool { return ranges[i][1] > idx })
	return i < len(ranges) && ranges[i][0] <= idx
}

// mergeRanges sorts page ranges and merges those that meet.
func mergeRanges(rs [][2]uint64) [][2]uint64 {
	if len(rs) == 0 {
		return nil
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i][0] < rs[j][0] })
	merged := rs[:1]
	for _, r := range rs[1:] {
		last := &merged[len(merged)-1]
		if r[0] <= last[1] {
			last[1] = max(last[1], r[1])
			continue
		}
		merged = append(merged, r)
	}
	return merged
}

// dataRanges returns the parts of the page ranges where file f has data,
// as SEEK_DATA and SEEK_HOLE tell them (tmpfs, memfds and the files of
// anonymous shared memory and SysV segments answer them too). A file system
// that cannot tell reports all of the file as data, which is the whole
// range: what was compared before.
func dataRanges(f *os.File, ranges [][2]uint64) [][2]uint64 {
	fd := int(f.Fd())
	var out [][2]uint64
	for _, rg := range ranges {
		off := int64(rg[0] * pageSize)
		end := int64(rg[1] * pageSize)
		for off < end {
			data, err := unix.Seek(fd, off, unix.SEEK_DATA)
			if errors.Is(err, unix.ENXIO) || (err == nil && data >= end) {
				break // no data from off to the end of the range
			}
			if err != nil {
				out = append(out, [2]uint64{uint64(off) / pageSize, rg[1]})
				break
			}
			hole, err := unix.Seek(fd, data, unix.SEEK_HOLE)
			if err != nil {
				hole = end
			}
			hole = min(hole, end)
			out = append(out, [2]uint64{uint64(data) / pageSize, (uint64(hole) + pageSize - 1) / pageSize})
			off = hole
		}
	}
	return out
}

// pagemap bits of one page (Documentation/admin-guide/mm/pagemap.rst).
const (
	pagePresent = 1 << 63
	pageSwapped = 1 << 62
)

// presentRanges returns the pages of obj in the given ranges that p's
// mappings of it have present or swapped, from /proc/PID/pagemap: without
// the object's file (an unprivileged recorder) only the processes that map
// it can have written it, and a page they wrote is in their page tables.
// A page the kernel swapped out of the object and that no process has
// mapped since is not seen; replay's copy still holds what was compared.
// If the page map cannot be read, every page of the ranges is compared.
func (sm *sharedMem) presentRanges(p sharedProc, obj *sharedObject, ranges [][2]uint64) [][2]uint64 {
	f, err := os.Open(ptrace.ProcPath(p.pid, "pagemap"))
	if err != nil {
		return ranges
	}
	defer f.Close()
	const batch = 1 << 17 // pages per read: 1 MiB of entries
	entries := make([]byte, 8*batch)
	var out [][2]uint64
	for _, m := range sm.maps[p.pid] {
		if m.obj != obj {
			continue
		}
		first := m.start / pageSize
		n := (m.end - m.start) / pageSize
		for i := uint64(0); i < n; i += batch {
			k := min(batch, n-i)
			if _, err := f.ReadAt(entries[:8*k], int64(8*(first+i))); err != nil {
				return ranges
			}
			for j := uint64(0); j < k; j++ {
				if binary.LittleEndian.Uint64(entries[8*j:])&(pagePresent|pageSwapped) == 0 {
					continue
				}
				idx := m.off/pageSize + i + j
				if l := len(out) - 1; l >= 0 && out[l][1] == idx {
					out[l][1]++
				} else {
					out = append(out, [2]uint64{idx, idx + 1})
				}
			}
		}
	}
	return out
}
