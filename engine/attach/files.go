package attach

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// numRlimits is RLIM_NLIMITS.
const numRlimits = 16

// layout reads the address space layout from /proc/PID/stat, and the
// program break, which it does not show, with an injected brk(0).
func (p *Process) layout() (trace.MMLayout, error) {
	l, err := ptrace.ReadLayout(p.Pid)
	if err != nil {
		return l, err
	}
	ret, err := ptrace.InjectSyscall(p.tids[0], p.mem, unix.SYS_BRK, 0)
	if err != nil {
		return l, fmt.Errorf("read the program break: %w", err)
	}
	l.Brk = uint64(ret)
	return l, nil
}

// process reads the state /proc shows without stopping anything:
// descriptors, directory, limits, auxv and command line.
func (p *Process) process(s *trace.Snapshot) error {
	var err error
	if s.Files, err = readFiles(p.Pid); err != nil {
		return err
	}
	if s.Cwd, err = os.Readlink(fmt.Sprintf("/proc/%d/cwd", p.Pid)); err != nil {
		return fmt.Errorf("read the current directory: %w", err)
	}
	for r := 0; r < numRlimits; r++ {
		var lim unix.Rlimit
		if err := unix.Prlimit(p.Pid, r, nil, &lim); err != nil {
			return fmt.Errorf("read rlimit %d: %w", r, err)
		}
		s.Rlimits = append(s.Rlimits, trace.Rlimit{Resource: r, Cur: lim.Cur, Max: lim.Max})
	}
	auxv, err := os.ReadFile(fmt.Sprintf("/proc/%d/auxv", p.Pid))
	if err != nil {
		return fmt.Errorf("read the auxv: %w", err)
	}
	for i := 0; i+16 <= len(auxv); i += 16 {
		e := trace.AuxEntry{Type: le64(auxv[i:]), Val: le64(auxv[i+8:])}
		s.Auxv = append(s.Auxv, e)
		if e.Type == 0 {
			break
		}
	}
	cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.Pid))
	if err != nil {
		return fmt.Errorf("read the command line: %w", err)
	}
	for _, a := range bytes.Split(bytes.TrimSuffix(cmd, []byte{0}), []byte{0}) {
		s.Cmdline = append(s.Cmdline, string(a))
	}
	return nil
}

// readFiles lists the open descriptors of pid with their positions and
// flags (from fdinfo).
func readFiles(pid int) ([]trace.OpenFile, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list the descriptors: %w", err)
	}
	var out []trace.OpenFile
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		link, err := os.Readlink(dir + "/" + e.Name())
		if err != nil {
			continue // closed in between
		}
		f := trace.OpenFile{Fd: fd, Path: link, Kind: kindOf(link)}
		info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%d", pid, fd))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(info), "\n") {
			k, v, _ := strings.Cut(l, ":")
			v = strings.TrimSpace(v)
			switch k {
			case "pos":
				f.Pos, _ = strconv.ParseInt(v, 10, 64)
			case "flags":
				n, _ := strconv.ParseInt(v, 8, 64)
				f.Flags = int(n)
			}
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Fd < out[j].Fd })
	return out, nil
}

// kindOf classifies a /proc/PID/fd link.
func kindOf(link string) trace.FileKind {
	switch {
	case strings.HasPrefix(link, "pipe:"):
		return trace.FilePipe
	case strings.HasPrefix(link, "socket:"):
		return trace.FileSocket
	case strings.HasPrefix(link, "anon_inode:"):
		return trace.FileAnon
	case strings.HasPrefix(link, "/dev/"), strings.HasSuffix(link, " (deleted)"), !strings.HasPrefix(link, "/"):
		return trace.FileOther
	}
	return trace.FileRegular
}
