package attach

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"strings"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// kernelMappings have no contents of the process's own: the kernel makes
// them in every process.
var kernelMappings = map[string]bool{"[vvar]": true, "[vvar_vclock]": true, "[vsyscall]": true}

// regions reads every mapping of the process with its contents.
func (p *Process) regions() ([]trace.Region, error) {
	entries, err := ptrace.ReadMaps(p.Pid)
	if err != nil {
		return nil, err
	}
	resident, err := readResident(p.Pid)
	if err != nil {
		return nil, err
	}
	var out []trace.Region
	for _, e := range entries {
		m := trace.Region{Start: e.Start, Size: e.End - e.Start, Perms: e.Perms, Offset: e.Offset, Path: e.Path}
		switch {
		case kernelMappings[e.Path]:
			m.Skipped = "made by the kernel in every process"
		case !e.Shared() && e.Inode == 0 && resident[e.Start].rss == 0 && e.Path != "[vdso]":
			// (The kernel fills the vDSO's pages when first touched: they
			// are not zeros before.)
			m.Zero = true
		case !e.Shared() && e.Inode == 0 && e.Path != "[vdso]":
			// Anonymous memory is mostly untouched in big heaps and
			// runtime arenas: only the pages present (or swapped) are
			// read and kept; the others read as zeros.
			if err := p.readPresent(&m); err != nil {
				return nil, err
			}
		default:
			data := make([]byte, m.Size)
			if _, err := p.mem.ReadAt(data, e.Start); err != nil {
				return nil, fmt.Errorf("mapping %#x-%#x %s: %w", e.Start, e.End, e.Path, err)
			}
			if byReference(&e) && resident[e.Start].anon == 0 {
				m.File = &trace.FileRef{Path: e.Path, Offset: e.Offset, Size: m.Size, SHA256: sha256.Sum256(data)}
			} else {
				m.Data = data
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// pagemap bits of one page (Documentation/admin-guide/mm/pagemap.rst).
const (
	pagePresent = 1 << 63
	pageSwapped = 1 << 62
	pageSize    = 4096
)

// readPresent reads the pages of m that are present or swapped, as runs.
func (p *Process) readPresent(m *trace.Region) error {
	f, err := os.Open(ptrace.ProcPath(p.Pid, "pagemap"))
	if err != nil {
		return fmt.Errorf("read the page map of %d: %w", p.Pid, err)
	}
	defer f.Close()
	n := m.Size / pageSize
	entries := make([]byte, 8*n)
	if _, err := f.ReadAt(entries, int64(m.Start/pageSize*8)); err != nil {
		return fmt.Errorf("read the page map of %d at %#x: %w", p.Pid, m.Start, err)
	}
	var runs []trace.Run
	for i := uint64(0); i < n; i++ {
		e := binary.LittleEndian.Uint64(entries[8*i:])
		if e&(pagePresent|pageSwapped) == 0 {
			continue
		}
		if k := len(runs); k > 0 && runs[k-1].Off+runs[k-1].Len == i*pageSize {
			runs[k-1].Len += pageSize
		} else {
			runs = append(runs, trace.Run{Off: i * pageSize, Len: pageSize})
		}
	}
	if len(runs) == 0 {
		m.Zero = true
		return nil
	}
	var total uint64
	for _, r := range runs {
		total += r.Len
	}
	data := make([]byte, total)
	at := uint64(0)
	for _, r := range runs {
		if _, err := p.mem.ReadAt(data[at:at+r.Len], m.Start+r.Off); err != nil {
			return fmt.Errorf("mapping %#x-%#x %s: %w", m.Start, m.End(), m.Path, err)
		}
		at += r.Len
	}
	m.Data = data
	if len(runs) > 1 || runs[0].Len != m.Size {
		m.Runs = runs
	}
	return nil
}

// byReference reports a mapping whose bytes a replay may take from its
// file: private, not writable, of a file that still exists. It must also
// have no page of its own (smaps' Anonymous): relocations written before a
// RELRO mprotect make a read-only mapping differ from its file.
func byReference(e *ptrace.MapEntry) bool {
	return e.Inode != 0 && !e.Shared() && e.Perms[1] == '-' && strings.HasPrefix(e.Path, "/") &&
		!strings.HasSuffix(e.Path, " (deleted)")
}

// usage is what smaps says of one mapping, in kilobytes.
type usage struct {
	// rss counts pages in memory or swap: an anonymous mapping with none
	// has never been written and reads as zeros.
	rss uint64
	// anon counts the private copies of pages (written since mapped).
	anon uint64
}

// readResident returns the usage of each mapping by its start.
func readResident(pid int) (map[uint64]usage, error) {
	maps, err := ptrace.ReadSmaps(pid)
	if err != nil {
		return nil, err
	}
	out := map[uint64]usage{}
	for _, m := range maps {
		out[m.Start] = usage{rss: m.KB["Rss"] + m.KB["Swap"], anon: m.KB["Anonymous"]}
	}
	return out, nil
}
