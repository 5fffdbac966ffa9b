package ptrace

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// MapEntry is one line of /proc/PID/maps.
type MapEntry struct {
	Start, End, Offset  uint64
	Perms               string // "r-xp": read, write, exec, shared or private
	Major, Minor, Inode uint64
	// Path is the file, or [heap], [stack], [vdso]…; empty for anonymous
	// memory. It may hold spaces, and end with " (deleted)".
	Path string
}

// Shared reports a MAP_SHARED mapping.
func (m *MapEntry) Shared() bool { return len(m.Perms) >= 4 && m.Perms[3] == 's' }

// ReadMaps parses the mappings of process pid (through a live thread of it:
// ProcPath). Lines it cannot parse are skipped.
func ReadMaps(pid int) ([]MapEntry, error) {
	var out []MapEntry
	err := scanProc(pid, "maps", "the mappings", func(line string) {
		if m, ok := parseMapLine(line); ok {
			out = append(out, m)
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// parseMapLine parses one line of /proc/PID/maps.
func parseMapLine(line string) (MapEntry, bool) {
	var m MapEntry
	fields := strings.Fields(line)
	if len(fields) < 5 {
		return m, false
	}
	lo, hi, _ := strings.Cut(fields[0], "-")
	var err1, err2, err3 error
	m.Start, err1 = strconv.ParseUint(lo, 16, 64)
	m.End, err2 = strconv.ParseUint(hi, 16, 64)
	m.Offset, err3 = strconv.ParseUint(fields[2], 16, 64)
	if err1 != nil || err2 != nil || err3 != nil || len(fields[1]) < 4 {
		return m, false
	}
	m.Perms = fields[1]
	maj, mnr, _ := strings.Cut(fields[3], ":")
	m.Major, _ = strconv.ParseUint(maj, 16, 64)
	m.Minor, _ = strconv.ParseUint(mnr, 16, 64)
	m.Inode, _ = strconv.ParseUint(fields[4], 10, 64)
	if len(fields) > 5 {
		// The path is the rest of the line after the inode field.
		rest := line
		for _, f := range fields[:5] {
			i := strings.Index(rest, f)
			rest = rest[i+len(f):]
		}
		m.Path = strings.TrimSpace(rest)
	}
	return m, true
}

// scanProc calls line with each line of the file name of /proc/PID; what
// says what the file holds, in errors. The file is read through the
// process's own entry first: only a leader that exited before its other
// threads shows an empty file there, which is then read again through a
// live thread (ProcPath), so that each read costs no look at the leader's
// state first (at every exec and mmap that reads the mappings).
func scanProc(pid int, name, what string, line func(string)) error {
	own := fmt.Sprintf("/proc/%d/%s", pid, name)
	b, err := os.ReadFile(own)
	if err == nil && len(b) == 0 {
		if p := ProcPath(pid, name); p != own {
			b, err = os.ReadFile(p)
		}
	}
	if err != nil {
		return fmt.Errorf("read %s of %d: %w", what, pid, err)
	}
	for l := range strings.Lines(string(b)) {
		line(strings.TrimSuffix(l, "\n"))
	}
	return nil
}

// Smaps is one mapping of /proc/PID/smaps as its readers need it: its
// range, the sizes it lists (in kB, by name: "Rss", "Swap", "Anonymous"…)
// and its VmFlags ("wf", "dc"…).
type Smaps struct {
	Start, End uint64
	KB         map[string]uint64
	Flags      []string
}

// ReadSmaps parses /proc/PID/smaps.
func ReadSmaps(pid int) ([]Smaps, error) {
	var out []Smaps
	err := scanProc(pid, "smaps", "the memory use", func(line string) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			return
		}
		name, isField := strings.CutSuffix(fields[0], ":")
		if !isField {
			// A mapping's first line: "start-end perms …".
			lo, hi, ok := strings.Cut(fields[0], "-")
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			if ok && err1 == nil && err2 == nil {
				out = append(out, Smaps{Start: a, End: b, KB: map[string]uint64{}})
			}
			return
		}
		if len(out) == 0 {
			return
		}
		cur := &out[len(out)-1]
		if name == "VmFlags" {
			cur.Flags = fields[1:]
		} else if len(fields) >= 2 {
			cur.KB[name], _ = strconv.ParseUint(fields[1], 10, 64)
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
