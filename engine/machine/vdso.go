package machine

import (
	"encoding/binary"
	"fmt"
	"os"

	"github.com/rewind-debugger/rewind/engine/patch"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// atSysinfoEhdr is the auxv type of the vDSO's address.
const atSysinfoEhdr = 33

// selfMem reads this process's memory through /proc/self/mem.
type selfMem struct{ f *os.File }

func (m selfMem) ReadAt(p []byte, addr uint64) (int, error) { return m.f.ReadAt(p, int64(addr)) }
func (m selfMem) WriteAt(p []byte, addr uint64) (int, error) {
	return 0, fmt.Errorf("write %d bytes at %#x: this process's vDSO is only read", len(p), addr)
}

// VDSO describes this kernel's vDSO (every process gets the same image),
// nil if there is none or it cannot be read.
func VDSO() *trace.VDSO {
	auxv, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		return nil
	}
	var base uint64
	for i := 0; i+16 <= len(auxv); i += 16 {
		if binary.LittleEndian.Uint64(auxv[i:]) == atSysinfoEhdr {
			base = binary.LittleEndian.Uint64(auxv[i+8:])
		}
	}
	if base == 0 {
		return nil
	}
	f, err := os.Open("/proc/self/mem")
	if err != nil {
		return nil
	}
	defer f.Close()
	img, err := patch.ReadVDSO(selfMem{f}, base)
	if err != nil {
		return nil
	}
	v := &trace.VDSO{SHA256: img.SHA256(), Size: len(img.Data), Funcs: map[string]uint64{}}
	for _, fn := range img.Funcs {
		v.Funcs[fn.Name] = fn.Offset
	}
	return v
}

// vdsoWarning says how this kernel's vDSO differs from the recording's: the
// recorder patched its functions into system calls at the addresses its
// symbols gave, and replay patches this kernel's by its own symbols, so a
// program calling them replays only where they are at the same places.
func vdsoWarning(h *trace.Header) string {
	rec := h.VDSO
	if rec == nil || h.Patch == 0 || h.FormatVersion >= trace.ImageVersion {
		return "" // (replay maps the recorded vDSO where this one differs)
	}
	cur := VDSO()
	if cur == nil {
		return "the recording's kernel had a vDSO and this one has none (or it cannot be read): " +
			"a program that looked for it diverges"
	}
	if cur.SHA256 == rec.SHA256 {
		return ""
	}
	same := cur.Size == rec.Size && len(cur.Funcs) == len(rec.Funcs)
	for name, off := range rec.Funcs {
		if o, ok := cur.Funcs[name]; !ok || o != off {
			same = false
		}
	}
	kernel := ""
	if h.Kernel != "" {
		kernel = " (recorded on kernel " + h.Kernel + ")"
	}
	if !same {
		return "this kernel's vDSO lays out its functions differently from the recording's" + kernel +
			": the program's calls into the vDSO run at other addresses, and replay diverges at the first one"
	}
	return "this kernel's vDSO differs from the recording's" + kernel + " with its functions at the same places: " +
		"calls replay, a program that reads the vDSO's bytes can diverge"
}
