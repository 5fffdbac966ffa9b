package debugger

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/rewind-debugger/rewind/dwarf"
	"github.com/rewind-debugger/rewind/engine/syscalls"
)

// infoSymbol implements info symbol ADDR as gdb: "main + 4 in section
// .text of /path/prog".
func (s *Session) infoSymbol(args string, res *Result) error {
	if strings.TrimSpace(args) == "" {
		return fmt.Errorf("Argument required (address).")
	}
	addr, err := s.evalAddress(args)
	if err != nil {
		return err
	}
	t := s.symbols()
	var img *dwarf.Image
	var sect string
	for _, im := range t.Images {
		if name, ok := im.SectionAt(addr); ok {
			img, sect = im, name
			break
		}
	}
	name, off, ok := t.SymbolAt(addr)
	if img == nil || !ok {
		return fmt.Errorf("No symbol matches %s.", strings.TrimSpace(args))
	}
	text := name
	if off != 0 {
		text = fmt.Sprintf("%s + %d", name, off)
	}
	res.Text = fmt.Sprintf("%s in section %s", text, sect)
	if len(t.Images) > 1 {
		// gdb names the file whenever more than one is loaded.
		res.Text += " of " + img.Path
	}
	res.Value = SymbolInfo{Symbol: name, Offset: off, Section: sect, File: img.Path, Address: fmt.Sprintf("%#x", addr)}
	return nil
}

// infoSharedLibrary lists the loaded libraries as gdb: the range of each
// one's .text, whether its symbols were read (with debug information, or
// "Yes (*)"), its path. The dynamic loader comes first, then the others in
// load order (mmap places each below the previous one).
func (s *Session) infoSharedLibrary(res *Result) {
	t := s.symbols()
	exe := s.Header().Program
	var libs []*dwarf.Image
	for _, img := range t.Images {
		if img.Path != exe {
			libs = append(libs, img)
		}
	}
	sort.SliceStable(libs, func(i, j int) bool {
		li, lj := strings.Contains(libs[i].Path, "/ld-"), strings.Contains(libs[j].Path, "/ld-")
		if li != lj {
			return li
		}
		return libs[i].Bias > libs[j].Bias
	})
	if len(libs) == 0 {
		res.Text, res.Value = "No shared libraries loaded at this time.", []LibraryItem{}
		return
	}
	var b strings.Builder
	b.WriteString("From                To                  Syms Read   Shared Object Library")
	var list []LibraryItem
	missing, packed, recorded := false, false, false
	for _, img := range libs {
		lo, hi, ok := img.TextRange()
		read := "Yes"
		if !img.HasDebugInfo() {
			read, missing = "Yes (*)", true
		}
		item := LibraryItem{Path: img.Path, Debug: img.HasDebugInfo(), Origin: "local"}
		if img.DebugPacked {
			// Not gdb's: say the debug file is the recording's copy.
			read, packed = "Yes (r)", true
			item.DebugFile, item.DebugOrigin = img.DebugPath, "recording"
		}
		if img.Recorded {
			// Nor this: the library itself is the recording's copy.
			read, recorded = read+" (R)", true
			item.Origin = "recording"
		}
		if ok {
			fmt.Fprintf(&b, "\n0x%016x  0x%016x  %-12s%s", lo, hi, read, img.Path)
			item.From, item.To = fmt.Sprintf("%#x", lo), fmt.Sprintf("%#x", hi)
		} else {
			fmt.Fprintf(&b, "\n%-18s  %-18s  %-12s%s", "", "", read, img.Path)
		}
		list = append(list, item)
	}
	if missing {
		b.WriteString("\n(*): Shared library is missing debugging information.")
	}
	if packed {
		b.WriteString("\n(r): Debugging information from the recording (rewind pack): its debug file is not on this machine.")
	}
	if recorded {
		b.WriteString("\n(R): The recording's copy of the library: the file on this machine is another, or is gone.")
	}
	res.Text, res.Value = b.String(), list
}

// gdbSignals are the Linux signals in gdb's order with gdb's descriptions.
var gdbSignals = []struct{ name, desc string }{
	{"SIGHUP", "Hangup"}, {"SIGINT", "Interrupt"}, {"SIGQUIT", "Quit"}, {"SIGILL", "Illegal instruction"},
	{"SIGTRAP", "Trace/breakpoint trap"}, {"SIGABRT", "Aborted"}, {"SIGFPE", "Arithmetic exception"},
	{"SIGKILL", "Killed"}, {"SIGBUS", "Bus error"}, {"SIGSEGV", "Segmentation fault"}, {"SIGSYS", "Bad system call"},
	{"SIGPIPE", "Broken pipe"}, {"SIGALRM", "Alarm clock"}, {"SIGTERM", "Terminated"}, {"SIGURG", "Urgent I/O condition"},
	{"SIGSTOP", "Stopped (signal)"}, {"SIGTSTP", "Stopped (user)"}, {"SIGCONT", "Continued"},
	{"SIGCHLD", "Child status changed"}, {"SIGTTIN", "Stopped (tty input)"}, {"SIGTTOU", "Stopped (tty output)"},
	{"SIGIO", "I/O possible"}, {"SIGXCPU", "CPU time limit exceeded"}, {"SIGXFSZ", "File size limit exceeded"},
	{"SIGVTALRM", "Virtual timer expired"}, {"SIGPROF", "Profiling timer expired"}, {"SIGWINCH", "Window size changed"},
	{"SIGUSR1", "User defined signal 1"}, {"SIGUSR2", "User defined signal 2"}, {"SIGPWR", "Power fail/restart"},
}

// replayStops are the signals a replay stops at (the engine's list, gdb's
// default for faults); every other one is delivered as recorded, silently.
var replayStops = map[string]bool{"SIGSEGV": true, "SIGBUS": true, "SIGFPE": true, "SIGILL": true, "SIGABRT": true, "SIGTRAP": true}

// infoSignals implements info signals [SIG] (and info handle) in gdb's
// table, with what a replay does: it stops and prints at the faults, and
// passes every signal to the program, as the recording did (it cannot
// hold one back: the program received it).
func infoSignals(args string, res *Result) error {
	rows := gdbSignals
	for i := 32; i <= 64; i++ {
		rows = append(rows, struct{ name, desc string }{fmt.Sprintf("SIG%d", i), fmt.Sprintf("Real-time event %d", i)})
	}
	if a := strings.TrimSpace(args); a != "" {
		want := a
		if n, err := strconv.Atoi(a); err == nil {
			want = syscalls.SignalName(n)
		} else if !strings.HasPrefix(want, "SIG") {
			want = "SIG" + strings.ToUpper(want)
		}
		var one []struct{ name, desc string }
		for _, r := range rows {
			if r.name == want {
				one = append(one, r)
			}
		}
		if len(one) == 0 {
			return fmt.Errorf("unknown signal %q (info signals lists them)", a)
		}
		rows = one
	}
	yes := func(b bool) string {
		if b {
			return "Yes"
		}
		return "No"
	}
	var b strings.Builder
	b.WriteString("Signal        Stop\tPrint\tPass to program\tDescription\n")
	if len(rows) > 1 {
		b.WriteString("\n")
	}
	var list []SignalItem
	for _, r := range rows {
		stop := replayStops[r.name]
		fmt.Fprintf(&b, "%-13s %s\t%s\t%s\t\t%s\n", r.name, yes(stop), yes(stop), "Yes", r.desc)
		list = append(list, SignalItem{Signal: r.name, Stop: stop, Print: stop, Pass: true, Description: r.desc})
	}
	if len(rows) > 1 {
		b.WriteString("\nA replay delivers every signal as recorded; it stops at the faults.")
	}
	res.Text, res.Value = strings.TrimRight(b.String(), "\n"), list
	return nil
}

// infoInferiors implements info inferiors as gdb: the debugged process is
// inferior 1 (process N selects another one of a recording's tree).
func (s *Session) infoInferiors(res *Result) {
	desc, conn := fmt.Sprintf("process %d", s.Process()), "1 (replay)"
	if s.habits.killed {
		desc, conn = "<null>", ""
	}
	exe := s.Header().Program
	for _, p := range s.procs {
		if p.Pid == s.Process() && p.Exe != "" {
			exe = p.Exe
		}
	}
	res.Text = fmt.Sprintf("  %-4s %-17s %-20s %-17s \n* %-4s %-17s %-20s %-17s ", "Num", "Description", "Connection", "Executable",
		"1", desc, conn, exe)
	res.Value = []InferiorItem{{ID: 1, Pid: s.Process(), Current: true, Executable: exe, Killed: s.habits.killed}}
}

// infoWatchpoints implements info watchpoints: the breakpoint table with
// watchpoints only.
func (s *Session) infoWatchpoints(res *Result) error {
	if len(s.watches) == 0 {
		res.Text, res.Value = "No watchpoints.", []BreakpointItem{}
		return nil
	}
	bps := s.bps
	s.bps = nil
	defer func() { s.bps = bps }()
	s.infoBreakpoints(res)
	return nil
}

// cmdBacktraceFull implements bt full [N]: each frame with its locals, as
// gdb prints them (eight spaces in, "No locals." when there are none).
func (s *Session) cmdBacktraceFull(args string, res *Result) error {
	if err := s.cmdBacktrace(args, res); err != nil {
		return err
	}
	infos, _ := res.Value.([]FrameInfo)
	frames, err := s.backtraceStack(s.currentThread(), len(infos))
	if err != nil {
		return err
	}
	lines := strings.Split(res.Text, "\n")
	var out []string
	var vals []FullFrame
	for i, l := range lines {
		out = append(out, l)
		if i >= len(infos) {
			continue
		}
		item := FullFrame{Frame: infos[i]}
		if frames[i].Function == nil {
			out = append(out, "No symbol table info available.")
			vals = append(vals, item)
			continue
		}
		_, locals, err := s.symbols().FrameVariables(frames, i, s.mem())
		if err != nil {
			return err
		}
		var vs []VarInfo
		for _, v := range locals {
			val := s.format(v.Value, 0)
			vs = append(vs, VarInfo{Name: v.Name, Value: val})
			out = append(out, "        "+v.Name+" = "+val)
		}
		if len(vs) == 0 {
			out = append(out, "No locals.")
		}
		item.Locals, item.HasLocals = vs, true
		vals = append(vals, item)
	}
	res.Text, res.Value = strings.Join(out, "\n"), vals
	return nil
}
