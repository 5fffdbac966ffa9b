package debugger

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// newInfoTable is info's subcommands: gdb's, and rewind's own
// (processes, checkpoints).
func newInfoTable() *Registry {
	vars := func(s *Session, name, _ string, res *Result) error { return s.cmdInfoVars(name, res) }
	return newRegistry([]*Command{
		{Name: "registers", Aliases: []string{"reg", "r"}, GDB: true, killed: errNoRegisters,
			Usage: "info registers [REG]", Help: "the general registers of the selected thread, or one of them",
			run: func(s *Session, _, args string, res *Result) error { return s.infoRegisters(false, args, res) }},
		{Name: "all-registers", GDB: true, killed: errNoRegisters,
			Usage: "info all-registers [REG]", Help: "the registers with the x87, SSE and AVX state",
			run: func(s *Session, _, args string, res *Result) error { return s.infoRegisters(true, args, res) }},
		{Name: "locals", GDB: true, killed: errNoFrame,
			Usage: "info locals", Help: "the selected frame's local variables", run: vars},
		{Name: "args", GDB: true, killed: errNoFrame,
			Usage: "info args", Help: "the selected frame's arguments", run: vars},
		{Name: "frame", Aliases: []string{"f"}, GDB: true, killed: errNoFrame,
			Usage: "info frame", Help: "the selected frame: its addresses and saved registers",
			run: func(s *Session, _, _ string, res *Result) error { return s.cmdInfoFrame(res) }},
		{Name: "threads", GDB: true, killed: errNoThreads,
			Usage: "info threads", Help: "the threads alive now, with gdb's numbers",
			run: func(s *Session, _, _ string, res *Result) error { return s.infoThreads(res) }},
		{Name: "breakpoints", Aliases: []string{"break", "b"}, GDB: true,
			Usage: "info breakpoints", Help: "the breakpoints and watchpoints, with their hits",
			run: func(s *Session, _, _ string, res *Result) error { s.infoBreakpoints(res); return nil }},
		{Name: "watchpoints", GDB: true,
			Usage: "info watchpoints", Help: "the watchpoints alone",
			run: func(s *Session, _, _ string, res *Result) error { return s.infoWatchpoints(res) }},
		{Name: "display", GDB: true,
			Usage: "info display", Help: "the display expressions",
			run: func(s *Session, _, _ string, res *Result) error { s.infoDisplay(res); return nil }},
		{Name: "checkpoints", GDB: true,
			Usage: "info checkpoints", Help: "the checkpoints: id, when, where",
			run: func(s *Session, _, _ string, res *Result) error { s.infoCheckpoints(res); return nil }},
		{Name: "source", GDB: true,
			Usage: "info source", Help: "the current source file: its path, lines and language",
			run: func(s *Session, _, _ string, res *Result) error { return s.cmdInfoSource(res) }},
		{Name: "line", GDB: true, Complete: CompleteLocation,
			Usage: "info line [LOC]", Help: "the addresses of a source line",
			run: func(s *Session, _, args string, res *Result) error { return s.cmdInfoLine(args, res) }},
		{Name: "symbol", GDB: true, Complete: CompleteExpression,
			Usage: "info symbol ADDR", Help: "the symbol an address is in, and its section",
			run: func(s *Session, _, args string, res *Result) error { return s.infoSymbol(args, res) }},
		{Name: "sharedlibrary", Aliases: []string{"shared", "dll"}, GDB: true,
			Usage: "info sharedlibrary", Help: "the loaded libraries and whether their symbols were read",
			run: func(s *Session, _, _ string, res *Result) error { s.infoSharedLibrary(res); return nil }},
		{Name: "signals", Aliases: []string{"signal", "handle"}, GDB: true,
			Usage: "info signals [SIG]", Help: "what a replay does with each signal",
			run: func(_ *Session, _, args string, res *Result) error { return infoSignals(args, res) }},
		{Name: "inferiors", GDB: true,
			Usage: "info inferiors", Help: "the debugged process, as gdb's inferior 1",
			run: func(s *Session, _, _ string, res *Result) error { s.infoInferiors(res); return nil }},
		{Name: "processes",
			Usage: "info processes", Help: "the processes of the recording",
			run: func(s *Session, _, _ string, res *Result) error { s.infoProcesses(res); return nil }},
		{Name: "mappings", Aliases: []string{"proc"},
			Usage: "info mappings", Help: "the memory mappings of the debugged process",
			run: func(s *Session, _, _ string, res *Result) error { return s.infoMappings(res) }},
	}, func(name, _ string) error {
		return fmt.Errorf("unknown info command %q (registers, all-registers, threads, breakpoints, mappings, locals, args, frame, source, line)", name)
	})
}

// infoBreakpoints is gdb's table of breakpoints and watchpoints.
func (s *Session) infoBreakpoints(res *Result) {
	var list []BreakpointItem
	var b strings.Builder
	b.WriteString("Num     Type           Disp Enb Address            What\n")
	for _, bp := range s.bps {
		temp := bp.temp
		item := BreakpointItem{ID: bp.id, Type: "breakpoint", Location: bp.spec, Enabled: !bp.disabled, Temporary: &temp,
			Pending: len(bp.addrs) == 0, Condition: bp.cond, Hits: bp.hits}
		disp, enb := "keep", "y"
		if bp.temp {
			disp = "del"
		}
		if bp.disabled {
			enb = "n"
		}
		for _, a := range bp.addrs {
			item.Addresses = append(item.Addresses, fmt.Sprintf("%#x", a))
		}
		list = append(list, item)
		row := func(num, addr, what string) {
			fmt.Fprintf(&b, "%-7s %-14s %-4s %-3s %-18s %s\n", num, "breakpoint", disp, enb, addr, what)
		}
		switch len(bp.addrs) {
		case 0:
			row(strconv.Itoa(bp.id), "<PENDING>", bp.spec)
		case 1:
			row(strconv.Itoa(bp.id), fmt.Sprintf("0x%016x", bp.addrs[0]), s.breakpointPlace(bp.addrs[0], bp.spec))
		default:
			row(strconv.Itoa(bp.id), "<MULTIPLE>", "")
		}
		if bp.cond != "" {
			fmt.Fprintf(&b, "\tstop only if %s\n", bp.cond)
		}
		if bp.hits > 0 {
			fmt.Fprintf(&b, "\tbreakpoint already hit %d time%s\n", bp.hits, map[bool]string{true: "", false: "s"}[bp.hits == 1])
		}
		if n := s.habits.ignore[bp.id]; n > 0 {
			fmt.Fprintf(&b, "\tignore next %d hits\n", n)
		}
		// The locations come after what is said of the whole breakpoint.
		for i, a := range bp.addrs {
			if len(bp.addrs) > 1 {
				fmt.Fprintf(&b, "%-7s %-14s %-4s %-3s %-18s %s\n", fmt.Sprintf("%d.%d", bp.id, i+1), "", "", "y", fmt.Sprintf("0x%016x", a), s.breakpointPlace(a, bp.spec))
			}
		}
	}
	for _, w := range s.watches {
		list = append(list, BreakpointItem{ID: w.id, Type: "watchpoint", Expr: w.expr, Address: fmt.Sprintf("%#x", w.wp.Addr), Size: w.wp.Len,
			Enabled: !w.disabled, Hits: w.hits})
		enb := "y"
		if w.disabled {
			enb = "n"
		}
		kind := "hw watchpoint"
		if w.wp.ReadWrite {
			kind = "acc watchpoint"
		}
		fmt.Fprintf(&b, "%-7d %-14s %-4s %-3s %-18s %s\n", w.id, kind, "keep", enb, "", w.expr)
		if w.hits > 0 {
			fmt.Fprintf(&b, "\tbreakpoint already hit %d time%s\n", w.hits, map[bool]string{true: "", false: "s"}[w.hits == 1])
		}
	}
	if len(s.bps)+len(s.watches) == 0 {
		b.Reset()
	}
	res.Value, res.Text = list, strings.TrimRight(b.String(), "\n")
	if res.Text == "" {
		res.Text = "No breakpoints or watchpoints."
	}
}

// infoMappings lists the debugged process's memory mappings.
func (s *Session) infoMappings(res *Result) error {
	maps, err := s.tl.Session().Mappings()
	if err != nil {
		return err
	}
	var list []MappingItem
	var b strings.Builder
	for _, m := range maps {
		list = append(list, MappingItem{Start: fmt.Sprintf("%#x", m.Start), End: fmt.Sprintf("%#x", m.End),
			Perms: m.Perms, Offset: fmt.Sprintf("%#x", m.Offset), Path: m.Path})
		fmt.Fprintf(&b, "%#18x %#18x %s %8x %s\n", m.Start, m.End, m.Perms, m.Offset, m.Path)
	}
	res.Value, res.Text = list, strings.TrimRight(b.String(), "\n")
	return nil
}

func (s *Session) infoRegisters(all bool, which string, res *Result) error {
	tid := s.currentThread()
	regs, err := s.tl.Session().Regs(tid)
	if err != nil {
		return err
	}
	val := map[string]string{}
	var b strings.Builder
	for i, name := range trace.RegNames {
		v := regs[i]
		val[name] = fmt.Sprintf("%#x", v)
		if which != "" && strings.TrimPrefix(which, "$") != name {
			continue
		}
		extra := ""
		if name == "eflags" {
			extra = "  " + decodeFlags(v)
		}
		if name == "rip" {
			if fn, off := s.symbolize(v); fn != "" {
				extra = " " + symRef(fn, off)
			}
		}
		fmt.Fprintf(&b, "%-9s %#-18x %d%s\n", name, v, int64(v), extra)
	}
	if all {
		fx, err := s.tl.Session().FPRegs(tid)
		if err == nil && len(fx) >= 416 {
			val["fcw"] = fmt.Sprintf("%#x", binary.LittleEndian.Uint16(fx[0:]))
			val["mxcsr"] = fmt.Sprintf("%#x", binary.LittleEndian.Uint32(fx[24:]))
			fmt.Fprintf(&b, "%-9s %s\n%-9s %s\n", "fcw", val["fcw"], "mxcsr", val["mxcsr"])
			for i := 0; i < 16; i++ {
				x := fx[160+16*i : 176+16*i]
				name := fmt.Sprintf("xmm%d", i)
				val[name] = fmt.Sprintf("0x%016x%016x", binary.LittleEndian.Uint64(x[8:]), binary.LittleEndian.Uint64(x[:8]))
				fmt.Fprintf(&b, "%-9s %s\n", name, val[name])
			}
		}
		// AVX: the upper halves of ymm0-15 live in the XSAVE area.
		if xs, err := s.tl.Session().XState(tid); err == nil && len(xs) >= 576+256 && len(fx) >= 416 {
			for i := 0; i < 16; i++ {
				hi, lo := xs[576+16*i:592+16*i], fx[160+16*i:176+16*i]
				name := fmt.Sprintf("ymm%d", i)
				val[name] = fmt.Sprintf("0x%016x%016x%016x%016x", binary.LittleEndian.Uint64(hi[8:]), binary.LittleEndian.Uint64(hi[:8]),
					binary.LittleEndian.Uint64(lo[8:]), binary.LittleEndian.Uint64(lo[:8]))
				fmt.Fprintf(&b, "%-9s %s\n", name, val[name])
			}
		}
	}
	if which != "" {
		v, ok := val[strings.TrimPrefix(which, "$")]
		if !ok {
			return fmt.Errorf("no register %q", which)
		}
		res.Value = map[string]string{strings.TrimPrefix(which, "$"): v}
	} else {
		res.Value = val
	}
	res.Text = strings.TrimRight(b.String(), "\n")
	return nil
}

// decodeFlags names the set bits of eflags, like gdb.
func decodeFlags(v uint64) string {
	names := []struct {
		bit  uint
		name string
	}{{0, "CF"}, {2, "PF"}, {4, "AF"}, {6, "ZF"}, {7, "SF"}, {8, "TF"}, {9, "IF"}, {10, "DF"}, {11, "OF"}}
	var out []string
	for _, n := range names {
		if v&(1<<n.bit) != 0 {
			out = append(out, n.name)
		}
	}
	return "[ " + strings.Join(out, " ") + " ]"
}
