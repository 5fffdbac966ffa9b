package patch

import (
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// ExecMappings lists the file mappings of process pid as its exec left them
// (the executable and its interpreter), for Space.Map, from maps (its
// /proc/PID/maps, read here when nil): image returns the Image of a path
// (Images.Exec, which tells files at one path apart: the mappings are
// Fresh). The vDSO and other special mappings are not files.
func ExecMappings(pid int, maps []ptrace.MapEntry, image func(path string) *Image) ([]Mapping, error) {
	if maps == nil {
		var err error
		if maps, err = ptrace.ReadMaps(pid); err != nil {
			return nil, err
		}
	}
	var out []Mapping
	for _, m := range maps {
		if !strings.HasPrefix(m.Path, "/") || m.End <= m.Start {
			continue
		}
		mp := mapping(m.Start, m.End-m.Start, m.Offset, m.Perms, m.Path, image)
		mp.Fresh = true // nothing has run yet: the memory is the file's
		out = append(out, mp)
	}
	return out, nil
}

// RegionMappings lists the mappings of a snapshot (rewind record -p) for
// Space.Map, in recording and replay alike: the file mappings, and the
// anonymous executable memory (a JIT's), whose code is patched too. The
// vDSO is patched apart (PatchVDSO).
func RegionMappings(regions []trace.Region, image func(path string) *Image) []Mapping {
	var out []Mapping
	for _, r := range regions {
		file := strings.HasPrefix(r.Path, "/")
		if r.Size == 0 || r.Skipped != "" || (!file && (r.Path != "" || len(r.Perms) < 3 || r.Perms[2] != 'x')) {
			continue
		}
		out = append(out, mapping(r.Start, r.Size, r.Offset, r.Perms, r.Path, image))
	}
	return out
}

// mapping describes one mapping of /proc/PID/maps' form.
func mapping(start, size, offset uint64, perms, path string, image func(path string) *Image) Mapping {
	mp := Mapping{Addr: start, Len: size, Offset: offset, Shared: len(perms) >= 4 && perms[3] == 's', Prot: Prot(perms)}
	if strings.HasPrefix(path, "/") {
		mp.Image = image(path) // "(deleted)" included: image says what it was
	}
	return mp
}

// Prot reads the PROT_* bits of /proc/PID/maps permissions ("r-xp").
func Prot(perms string) int {
	prot := 0
	if len(perms) >= 3 {
		if perms[0] == 'r' {
			prot |= unix.PROT_READ
		}
		if perms[1] == 'w' {
			prot |= unix.PROT_WRITE
		}
		if perms[2] == 'x' {
			prot |= unix.PROT_EXEC
		}
	}
	return prot
}
