package patch

import (
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
)

// ExecMappings lists the file mappings of process pid as its exec left them
// (the executable and its interpreter), for Space.Map: image returns the
// Image of a path. The vDSO and other special mappings are not files.
func ExecMappings(pid int, image func(path string) *Image) ([]Mapping, error) {
	maps, err := ptrace.ReadMaps(pid)
	if err != nil {
		return nil, err
	}
	var out []Mapping
	for _, m := range maps {
		if !strings.HasPrefix(m.Path, "/") || m.End <= m.Start {
			continue
		}
		mp := Mapping{Addr: m.Start, Len: m.End - m.Start, Offset: m.Offset, Shared: m.Shared()}
		if m.Perms[0] == 'r' {
			mp.Prot |= unix.PROT_READ
		}
		if m.Perms[1] == 'w' {
			mp.Prot |= unix.PROT_WRITE
		}
		if m.Perms[2] == 'x' {
			mp.Prot |= unix.PROT_EXEC
		}
		if !strings.HasSuffix(m.Path, " (deleted)") {
			mp.Image = image(m.Path)
		}
		out = append(out, mp)
	}
	return out, nil
}
