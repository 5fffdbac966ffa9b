package debugger

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/rewind-debugger/rewind/dwarf"
	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// symbols returns the images of the process as it is mapped now: the
// executable first, then every shared library, each at its load address.
// Mappings change only at events, so within one segment of one replaying
// process the table is reused without reading /proc/PID/maps again: steps
// and breakpoint filters ask for it at every stop.
func (s *Session) symbols() *dwarf.Table {
	live := s.tl.Session()
	if s.syms != nil && s.symsLive == live && s.symsEvent == live.Next() {
		return s.syms
	}
	s.symsLive, s.symsEvent = live, live.Next()
	maps, err := live.Mappings()
	if err != nil {
		if s.syms != nil {
			return s.syms
		}
		return &dwarf.Table{}
	}
	if s.syms != nil && s.symsAt == len(maps) {
		return s.syms
	}
	if s.images == nil {
		s.images = map[string]*dwarf.Image{}
	}
	t := &dwarf.Table{}
	exe := s.tl.Session().Header().Program
	order := []string{exe}
	base := map[string]uint64{}
	for _, m := range maps {
		if m.Path == "" || strings.HasPrefix(m.Path, "[") {
			continue
		}
		if _, ok := base[m.Path]; !ok && m.Offset == 0 {
			base[m.Path] = m.Start
			if m.Path != exe {
				order = append(order, m.Path)
			}
		}
	}
	for _, p := range order {
		b, ok := base[p]
		if !ok {
			continue
		}
		key := fmt.Sprintf("%s@%#x", p, b)
		img := s.images[key]
		if img == nil {
			var r io.ReaderAt // the local file
			if data, ok := live.ChangedFile(p); ok {
				r = bytes.NewReader(data) // not the recorded file here: the trace's copy
			}
			img, err = dwarf.LoadImageWith(p, r, b, s.packedDebug)
			if err == nil && r != nil {
				img.Recorded = true
			}
			if err != nil {
				data, ferr := live.RecordedFile(p)
				if ferr != nil {
					continue
				}
				if img, err = dwarf.LoadImageWith(p, bytes.NewReader(data), b, s.packedDebug); err != nil {
					continue
				}
			}
			s.images[key] = img
		}
		t.Images = append(t.Images, img)
	}
	s.syms, s.symsAt = t, len(maps)
	return t
}

// memory reads the replaying process.
type memory struct{ s *Session }

func (m memory) ReadAt(p []byte, addr uint64) (int, error) {
	b, err := m.s.tl.Session().ReadMem(addr, len(p))
	n := copy(p, b)
	if err != nil {
		return n, err
	}
	if n < len(p) {
		return n, fmt.Errorf("Cannot access memory at address %#x", addr+uint64(n))
	}
	return n, nil
}

// mem is the target memory for the dwarf package.
func (s *Session) mem() dwarf.Memory { return memory{s} }

// dwarfRegs converts the kernel's register layout to DWARF numbering.
func dwarfRegs(r trace.Regs) dwarf.Regs {
	var d dwarf.Regs
	for n, k := range [dwarf.NumRegs]int{trace.RAX, trace.RDX, trace.RCX, trace.RBX, trace.RSI, trace.RDI, trace.RBP, trace.RSP,
		trace.R8, trace.R9, trace.R10, trace.R11, trace.R12, trace.R13, trace.R14, trace.R15, trace.RIP} {
		d.Set(n, r[k])
	}
	d.FSBase = r[trace.FSBase]
	return d
}

// frameRegs is dwarfRegs with the thread's SSE registers, which
// variables of optimized code live in too.
func (s *Session) frameRegs(tid int32, r trace.Regs) dwarf.Regs {
	d := dwarfRegs(r)
	const xmmOff = 160 // XMM0 in the FXSAVE area
	if fx, err := s.tl.Session().FPRegs(tid); err == nil && len(fx) >= xmmOff+16*16 {
		for i := range d.XMM {
			copy(d.XMM[i][:], fx[xmmOff+16*i:])
		}
		d.HaveXMM = true
	}
	return d
}

// maxFrames bounds backtraces, as a guard against corrupt stacks.
const maxFrames = 256

// stack returns the call stack of a thread now, inlined calls as frames
// of their own, innermost first, down to main: gdb's default "backtrace
// past-main off", the C runtime's frames before main are noise.
func (s *Session) stack(tid int32) ([]dwarf.Frame, error) {
	return s.unwindStack(tid, false)
}

// backtraceStack is the stack backtrace shows: in a Rust program it goes
// on past main to _start, as gdb 13's does (it looks the main DWARF marks
// up by its qualified name in C's terms, finds nothing, and never sees
// main). Only when the frames past main are asked for: naming them reads
// the C library's debug information.
func (s *Session) backtraceStack(tid int32, limit int) ([]dwarf.Frame, error) {
	frames, err := s.stack(tid)
	if err != nil || (limit > 0 && limit <= len(frames)) || !atMain(frames) {
		return frames, err
	}
	if main := s.symbols().MainSubprogram(); main == nil || main.Lang() != dwarf.LangRust {
		return frames, nil
	}
	return s.unwindStack(tid, true)
}

// atMain says whether the outermost of frames is main.
func atMain(frames []dwarf.Frame) bool {
	n := len(frames)
	return n > 0 && (frames[n-1].Symbol == "main" || (frames[n-1].Function != nil && frames[n-1].Function.Name == "main"))
}

// unwindStack is stack, down to _start when pastMain.
func (s *Session) unwindStack(tid int32, pastMain bool) ([]dwarf.Frame, error) {
	regs, err := s.tl.Session().Regs(tid)
	if err != nil {
		return nil, err
	}
	if s.tl.Session().Header().Hook != "" {
		// In the hook page or a stub: the program is in the call of
		// the patched site, and its frames start there.
		hook.UserView(&regs, s.mem())
	}
	t := s.symbols()
	phys := t.Unwind(s.frameRegs(tid, regs), s.mem(), maxFrames)
	var out []dwarf.Frame
	for i, f := range phys {
		// A caller's pc is a return address: look up the call instruction.
		look := f.PC
		if i > 0 {
			look--
		}
		chain := t.FunctionsAt(look)
		if len(chain) == 0 {
			if f.Symbol == "" {
				if sym, _, ok := t.At(look); ok {
					f.Symbol = sym.Name
				}
			}
			if l, ok := t.LineAt(look); ok {
				f.File, f.Line = l.File, l.Line
			}
			f.Level = len(out)
			out = append(out, f)
			if f.Symbol == "main" && !pastMain {
				break
			}
			continue
		}
		file, line := "", 0
		if l, ok := t.LineAt(look); ok {
			file, line = l.File, l.Line
		}
		hide := 0
		if i == 0 {
			hide = s.hiddenAt(tid, f.PC)
		}
		for k, fn := range chain {
			if k < hide {
				// Not entered yet, as gdb shows it (inline.go): the
				// caller stands at the line of the call.
				file, line = fn.CallFile, fn.CallLine
				continue
			}
			g := f
			g.Function, g.Inlined = fn, fn.Inlined
			g.File, g.Line = file, line
			g.Level = len(out)
			if g.Symbol == "" {
				g.Symbol = fn.Name
			}
			out = append(out, g)
			// The frame that contains an inlined call is at its call site.
			file, line = fn.CallFile, fn.CallLine
		}
		if !pastMain && atMain(out) {
			break
		}
	}
	return out, nil
}

// selectedFrame returns the selected frame of the current thread.
func (s *Session) selectedFrame() (dwarf.Frame, []dwarf.Frame, error) {
	frames, err := s.stack(s.currentThread())
	if err != nil {
		return dwarf.Frame{}, nil, err
	}
	if len(frames) == 0 {
		return dwarf.Frame{}, nil, fmt.Errorf("no stack")
	}
	if s.frame >= len(frames) {
		s.frame = len(frames) - 1
	}
	return frames[s.frame], frames, nil
}
