package record

import (
	"bytes"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/machine"
	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// Version is the Rewind version written into trace headers.
var Version = "0.1.0"

// ResolveProgram finds prog like a shell would (PATH lookup when it has no
// slash) and checks that it is something Rewind can record: an x86-64 ELF
// executable, or a #! script whose interpreter is one.
func ResolveProgram(prog string) (string, error) {
	path := prog
	if !strings.Contains(prog, "/") {
		p, err := exec.LookPath(prog)
		if err != nil {
			return "", fmt.Errorf("%s: command not found in PATH", prog)
		}
		path = p
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", prog, err)
	}
	if err := checkExecutable(abs, 0); err != nil {
		return "", err
	}
	return abs, nil
}

func checkExecutable(path string, depth int) error {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s: no such file", path)
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	if fi.IsDir() {
		return fmt.Errorf("%s: is a directory", path)
	}
	if unix.Access(path, unix.X_OK) != nil {
		return fmt.Errorf("%s: not executable (permission denied)", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if bytes.HasPrefix(head, []byte("#!")) && depth == 0 {
		line := strings.TrimSpace(strings.SplitN(string(head[2:]), "\n", 2)[0])
		fields := strings.Fields(line)
		if len(fields) == 0 {
			return fmt.Errorf("%s: script without an interpreter", path)
		}
		return checkExecutable(fields[0], depth+1)
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		return fmt.Errorf("%s: not an ELF executable", path)
	}
	defer ef.Close()
	if ef.Machine != elf.EM_X86_64 || ef.Class != elf.ELFCLASS64 {
		return fmt.Errorf("%s: %s %s executable; rewind records x86-64 programs only", path, ef.Class, strings.TrimPrefix(ef.Machine.String(), "EM_"))
	}
	if ef.Type != elf.ET_EXEC && ef.Type != elf.ET_DYN {
		return fmt.Errorf("%s: ELF %s is not an executable", path, ef.Type)
	}
	return nil
}

// NewHeader describes the program and this machine for a trace header.
func NewHeader(path string, args, env []string, cwd string, stack uint64) *trace.Header {
	h := &trace.Header{
		FormatVersion: trace.CurrentVersion,
		RewindVersion: Version,
		Program:       path,
		Args:          args,
		Env:           env,
		Cwd:           cwd,
		Created:       time.Now().UTC(),
		Rlimits:       map[string][2]uint64{},
	}
	// The executable's identity is learned while the program starts, and
	// written with the header (trace.Header.Late): hashing a 30 MB binary
	// not hashed before (trace.FileSHA256 keeps sums) took ~25 ms.
	exe := sync.OnceValues(func() (string, string) { return exeIdentity(path) })
	go exe()
	h.Late = func(h *trace.Header) { h.ExeBuildID, h.ExeSHA256 = exe() }
	h.CPUModel, h.CPUFlags = machine.CPUInfo()
	h.Patch, h.VDSO = patch.Version, machine.VDSO()
	h.DataHash, h.WriteHash = trace.DataHashCRC, trace.WriteHashCRC
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		h.Kernel = unix.ByteSliceToString(u.Release[:])
		h.Hostname = unix.ByteSliceToString(u.Nodename[:])
	}
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_STACK, &lim) == nil {
		h.Rlimits["RLIMIT_STACK"] = [2]uint64{lim.Cur, lim.Max}
	}
	if stack != 0 {
		h.Rlimits["RLIMIT_STACK"] = [2]uint64{stack, h.Rlimits["RLIMIT_STACK"][1]}
	}
	return h
}

// exeIdentity returns the GNU build-id and the SHA-256 of the executable, so
// that replay can tell when the program changed since it was recorded.
func exeIdentity(path string) (buildID, sum string) {
	f, err := os.Open(path)
	if err != nil {
		return "", ""
	}
	defer f.Close()
	sum, _ = trace.FileSHA256(f)
	if ef, err := elf.NewFile(f); err == nil {
		defer ef.Close()
		if s := ef.Section(".note.gnu.build-id"); s != nil {
			if data, err := s.Data(); err == nil && len(data) > 16 {
				buildID = hex.EncodeToString(data[16:])
			}
		}
		if buildID == "" {
			if s := ef.Section(".note.go.buildid"); s != nil {
				if data, err := s.Data(); err == nil && len(data) > 16 {
					buildID = strings.TrimRight(string(data[16:]), "\x00")
				}
			}
		}
	}
	return buildID, sum
}
