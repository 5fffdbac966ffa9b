package patch

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
)

// ExecMappings lists the file mappings of process pid as its exec left them
// (the executable and its interpreter), for Space.Map: image returns the
// Image of a path. The vDSO and other special mappings are not files.
func ExecMappings(pid int, image func(path string) *Image) ([]Mapping, error) {
	data, err := os.ReadFile(ptrace.ProcPath(pid, "maps"))
	if err != nil {
		return nil, fmt.Errorf("read the mappings of %d: %w", pid, err)
	}
	var out []Mapping
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || !strings.HasPrefix(f[5], "/") {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		off, err3 := strconv.ParseUint(f[2], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil || end <= start || len(f[1]) < 4 {
			continue
		}
		mp := Mapping{Addr: start, Len: end - start, Offset: off, Shared: f[1][3] == 's'}
		if f[1][0] == 'r' {
			mp.Prot |= unix.PROT_READ
		}
		if f[1][1] == 'w' {
			mp.Prot |= unix.PROT_WRITE
		}
		if f[1][2] == 'x' {
			mp.Prot |= unix.PROT_EXEC
		}
		if path := strings.Join(f[5:], " "); !strings.HasSuffix(path, " (deleted)") {
			mp.Image = image(path)
		}
		out = append(out, mp)
	}
	return out, nil
}
