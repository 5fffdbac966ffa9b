package views

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/keymaps"
	"github.com/rewind-debugger/rewind/themes"
)

// The panes only render data, so a hand-built snapshot of
// testdata/source/corrupt.c stopped in sum(), where it crashes, stands in
// for a recording here; the integration tests use real ones.
var ptCorruptLines = func() []string {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "source", "corrupt.c"))
	if err != nil {
		panic(fmt.Sprintf("the source the snapshot shows: %v", err))
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}()

func ptSnapshot() *debugger.Snapshot {
	regs := []debugger.Register{}
	for i, n := range []string{"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11",
		"r12", "r13", "r14", "r15", "rip"} {
		regs = append(regs, debugger.Register{Name: n, Value: fmt.Sprintf("%#x", 0x5555555551a0+uint64(i*0x111))})
	}
	regs = append(regs, debugger.Register{Name: "eflags", Value: "0x10246", Flags: "[ ZF PF IF RF ]"})
	for _, n := range []string{"cs", "ss", "ds", "es", "fs", "gs", "fs_base", "gs_base"} {
		regs = append(regs, debugger.Register{Name: n, Value: "0x33"})
	}
	var fp []debugger.Register
	for i := 0; i < 16; i++ {
		fp = append(fp, debugger.Register{Name: fmt.Sprintf("xmm%d", i), Value: fmt.Sprintf("0x%032x", i*0x1010)})
	}
	var dis []debugger.DisasmLine
	texts := []string{"push   %rbp", "mov    %rsp,%rbp", "mov    %rdi,-0x18(%rbp)", "movl   $0x0,-0xc(%rbp)",
		"mov    -0x18(%rbp),%rax", "mov    %rax,-0x8(%rbp)", "jmp    0x5555555551c9 <sum+48>",
		"mov    -0x8(%rbp),%rax", "mov    0x10(%rax),%eax", "add    %eax,-0xc(%rbp)", "mov    -0x8(%rbp),%rax",
		"mov    0x8(%rax),%rax", "mov    %rax,-0x8(%rbp)", "cmpq   $0x0,-0x8(%rbp)", "jne    0x5555555551b7 <sum+30>",
		"mov    -0xc(%rbp),%eax", "pop    %rbp", "ret"}
	addr := uint64(0x555555555199)
	for i, tx := range texts {
		dis = append(dis, debugger.DisasmLine{Addr: addr, Symbol: fmt.Sprintf("sum+%d", addr-0x555555555199), Text: tx,
			Current: i == 8, Breakpoint: i == 3})
		addr += 4
	}
	node := func(name, next string, value int) []debugger.VarNode {
		var chars []debugger.VarNode
		for i, c := range name[:min(len(name), 8)] {
			chars = append(chars, debugger.VarNode{Name: fmt.Sprintf("[%d]", i), Type: "char", Value: fmt.Sprintf("%d '%c'", c, c)})
		}
		return []debugger.VarNode{
			{Name: "name", Type: "char [8]", Value: fmt.Sprintf("%q", name), Children: chars},
			{Name: "next", Type: "struct node *", Value: next},
			{Name: "value", Type: "int", Value: fmt.Sprint(value)},
		}
	}
	return &debugger.Snapshot{
		Moment: "#110", Event: 110, Total: 111, Thread: 7284,
		Frames: []debugger.FrameInfo{
			{Level: 0, PC: "0x5555555551bf", Function: "sum", File: "/src/corrupt.c", Line: 24,
				Args: []debugger.VarInfo{{Name: "head", Value: "0x5555555592e0"}}},
			{Level: 1, PC: "0x555555555301", Function: "main", File: "/src/corrupt.c", Line: 41},
			{Level: 2, PC: "0x7ffff7c29d90", Function: "__libc_start_call_main"},
		},
		Args: []debugger.VarNode{{Name: "head", Type: "struct node *", Value: "(struct node *) 0x5555555592e0",
			Children: []debugger.VarNode{{Name: "*", Type: "struct node", Value: `{name = "alpha", next = 0x555555559300, value = 1}`,
				Children: node("alpha", "0x555555559300", 1)}}}},
		Locals: []debugger.VarNode{
			{Name: "total", Type: "int", Value: "3"},
			{Name: "s", Type: "struct node", Value: `{name = "bravo-ov", next = 0x676e69776f6c66, value = 2}`,
				Children: node("bravo-ov", "0x676e69776f6c66", 2)},
		},
		Registers: regs, FPRegisters: fp, Disasm: dis,
		Source: &debugger.SourceView{Path: "/src/corrupt.c", Lines: slices.Clone(ptCorruptLines), Current: 24,
			Breakpoints: []int{20}, WatchLine: 16},
		Threads: []debugger.ThreadInfo{
			{Tid: 7284, Current: true, PC: "0x5555555551bf", Function: "sum"},
			{Tid: 7290, PC: "0x7ffff7c91117", Function: "__futex_abstimed_wait_common64"},
		},
		Breakpoints: []debugger.BreakpointInfo{
			{ID: 1, Spec: "sum", File: "corrupt.c", Line: 20, Addrs: []string{"0x5555555551a5"}},
			{ID: 3, Spec: "corrupt.c:41", Condition: "total > 2", File: "corrupt.c", Line: 41, Addrs: []string{"0x555555555301"}},
			{ID: 4, Spec: "missing.c:9", Pending: true},
			{ID: 5, Spec: "main", File: "corrupt.c", Line: 30, Addrs: []string{"0x5555555551e5"}, Temporary: true, Disabled: true},
		},
		Watches: []debugger.WatchpointInfo{{ID: 2, Expr: "b->next", Addr: "0x5555555592f8", Size: 8}},
	}
}

func ptContext(t *testing.T, th *themes.Theme) *Context {
	t.Helper()
	k, err := keymaps.New("default", nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Context{Theme: th, Keys: k}
}

// ptPress builds the key message whose String() is name.
func ptPress(name string) tea.KeyPressMsg {
	codes := map[string]rune{"up": tea.KeyUp, "down": tea.KeyDown, "left": tea.KeyLeft, "right": tea.KeyRight,
		"pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown, "home": tea.KeyHome, "end": tea.KeyEnd, "enter": tea.KeyEnter,
		"esc": tea.KeyEscape, "space": tea.KeySpace, "delete": tea.KeyDelete, "backspace": tea.KeyBackspace}
	if c, ok := codes[name]; ok {
		return tea.KeyPressMsg{Code: c}
	}
	return tea.KeyPressMsg{Code: []rune(name)[0], Text: name}
}

// TestSourceKeysPress checks the test's own key helper (named so that the
// panes' -run filter includes it).
func TestSourceKeysPress(t *testing.T) {
	for _, n := range []string{"up", "down", "pgup", "pgdown", "home", "end", "enter", "esc", "space", "delete", "b", "/", "x"} {
		if got := ptPress(n).String(); got != n {
			t.Errorf("ptPress(%q).String() = %q", n, got)
		}
	}
}

// ptCase builds a pane in the state shown by its golden files.
type ptCase struct {
	name  string
	build func(ctx *Context, w, h int) Pane
}

// ptSized gives a pane its size before its snapshot, as the root does at
// start-up, so that scrolling on the snapshot sees the real height.
func ptSized(p Pane, w, h int, sn *debugger.Snapshot) Pane {
	p.SetSize(w, h)
	p.SetSnapshot(sn)
	return p
}

var ptCases = []ptCase{
	{"Source", func(c *Context, w, h int) Pane { return ptSized(NewSource(c), w, h, ptSnapshot()) }},
	{"Disasm", func(c *Context, w, h int) Pane { return ptSized(NewDisassembly(c), w, h, ptSnapshot()) }},
	{"Registers", func(c *Context, w, h int) Pane {
		r := NewRegisters(c)
		r.SetSize(w, h)
		r.SetSnapshot(ptSnapshot())
		// A step: rip and rax moved.
		sn := ptSnapshot()
		sn.Moment, sn.Event = "#111", 111
		sn.Registers[0].Value, sn.Registers[16].Value = "0x0", "0x5555555551c3"
		r.SetSnapshot(sn)
		return r
	}},
	{"Memory", func(c *Context, w, h int) Pane {
		m := ptMemory(c, w, h)
		return m
	}},
	{"Stack", func(c *Context, w, h int) Pane { return ptSized(NewStack(c), w, h, ptSnapshot()) }},
	{"Locals", func(c *Context, w, h int) Pane {
		l := NewLocals(c)
		ptSized(l, w, h, ptSnapshot())
		// Open head, its pointee, and s; leave the cursor on s.next.
		for _, k := range []string{"space", "down", "space", "down", "down", "down", "down", "down", "space", "down", "down"} {
			l.Update(ptPress(k))
		}
		return l
	}},
	{"Threads", func(c *Context, w, h int) Pane { return ptSized(NewThreads(c), w, h, ptSnapshot()) }},
	{"Breakpoints", func(c *Context, w, h int) Pane { return ptSized(NewBreakpoints(c), w, h, ptSnapshot()) }},
	{"Processes", func(c *Context, w, h int) Pane { return ptSized(NewProcesses(c), w, h, ptProcSnapshot()) }},
}

// ptProcSnapshot is a snapshot of a process tree: a shell that forked a
// child which exec'd, one killed by a signal, one alive at the end; the
// crashed one is debugged.
func ptProcSnapshot() *debugger.Snapshot {
	sn := ptSnapshot()
	sn.Processes = []debugger.ProcessInfo{
		{Pid: 4240, Args: []string{"./proctree"}, Exit: "0", First: 0, Last: 483, Tids: []int32{4240}},
		{Pid: 4241, Parent: 4240, Args: []string{"sh", "-c", "echo spawned; exit 5"}, Exit: "5", First: 44, Last: 175, Tids: []int32{4241}},
		{Pid: 4242, Parent: 4240, Args: []string{"./proctree"}, Exit: "SIGSEGV", First: 418, Last: 422, Tids: []int32{4242, 4250}},
		{Pid: 4243, Parent: 4242, Args: []string{"./proctree", "again"}, Exit: "-", First: 426, Last: 477, Tids: []int32{4243}},
	}
	sn.Process = 4242
	return sn
}

// ptMemory is a Memory pane that showed "buf" at two moments, the
// second after the program wrote 4 bytes.
func ptMemory(c *Context, w, h int) *Memory {
	m := NewMemory(c)
	m.SetSize(w, h)
	sn := ptSnapshot()
	m.SetSnapshot(sn)
	m.SetExpr("b->name")
	data := []byte("alpha\x00\x00\x00\x00\x93UUUU\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00bravo-overflowing\x00charlie\x00")
	m.Update(MemoryLoaded{Expr: "b->name", Addr: 0x5555555592f0, Data: data})
	sn2 := ptSnapshot()
	sn2.Moment, sn2.Event = "#111", 111
	m.SetSnapshot(sn2)
	data2 := append([]byte(nil), data...)
	copy(data2[8:], "wing")
	m.Update(MemoryLoaded{Expr: "b->name", Addr: 0x5555555592f0, Data: data2})
	return m
}

var ptThemes = []struct {
	name  string
	theme func() *themes.Theme
}{{"dark", themes.Dark}, {"nocolor", themes.NoColor}}

var ptSizes = [][2]int{{38, 10}, {78, 20}}

// ptTestPane runs the golden files and the size contract of one pane.
func ptTestPane(t *testing.T, name string) {
	var pc ptCase
	for _, c := range ptCases {
		if c.name == name {
			pc = c
		}
	}
	for _, th := range ptThemes {
		for _, sz := range ptSizes {
			t.Run(fmt.Sprintf("%s/%dx%d", th.name, sz[0], sz[1]), func(t *testing.T) {
				p := pc.build(ptContext(t, th.theme()), sz[0], sz[1])
				out := p.View()
				ptCheckSize(t, out, sz[0], sz[1])
				golden.RequireEqual(t, []byte(out))
			})
		}
	}
	t.Run("sizes", func(t *testing.T) {
		for _, sz := range [][2]int{{1, 1}, {5, 3}, {20, 5}, {200, 60}, {0, 0}, {3, 1}, {1, 7}} {
			ctx := ptContext(t, themes.NoColor())
			p := pc.build(ctx, sz[0], sz[1])
			ptCheckSize(t, p.View(), sz[0], sz[1])
			// Navigation at every size must not leave the window.
			for _, k := range []string{"end", "down", "pgdown", "pgup", "home", "up", "t", "space", "right", "left", "/", "a", "esc"} {
				p.Update(ptPress(k))
				ptCheckSize(t, p.View(), sz[0], sz[1])
			}
			// Without a snapshot, and resized after one.
			empty := pc.build(ctx, 40, 10)
			empty.SetSnapshot(nil)
			empty.SetSize(sz[0], sz[1])
			ptCheckSize(t, empty.View(), sz[0], sz[1])
			p.SetSize(sz[1], sz[0])
			ptCheckSize(t, p.View(), sz[1], sz[0])
		}
	})
}

// text is a pane's view without its styles, for tests that look for words.
func ptText(p Pane) string { return ansi.Strip(p.View()) }

func ptCheckSize(t *testing.T, out string, w, h int) {
	t.Helper()
	lines := strings.Split(out, "\n")
	if h == 0 {
		if out != "" {
			t.Errorf("%dx%d: want empty output, got %q", w, h, out)
		}
		return
	}
	if len(lines) != h {
		t.Errorf("%dx%d: %d lines, want %d:\n%s", w, h, len(lines), h, out)
	}
	for i, l := range lines {
		if lw := ansi.StringWidth(l); lw > w {
			t.Errorf("%dx%d: line %d is %d cells wide: %q", w, h, i, lw, l)
		}
	}
}

func TestSourceView(t *testing.T)      { ptTestPane(t, "Source") }
func TestDisasmView(t *testing.T)      { ptTestPane(t, "Disasm") }
func TestRegistersView(t *testing.T)   { ptTestPane(t, "Registers") }
func TestMemoryView(t *testing.T)      { ptTestPane(t, "Memory") }
func TestStackView(t *testing.T)       { ptTestPane(t, "Stack") }
func TestLocalsView(t *testing.T)      { ptTestPane(t, "Locals") }
func TestThreadsView(t *testing.T)     { ptTestPane(t, "Threads") }
func TestBreakpointsView(t *testing.T) { ptTestPane(t, "Breakpoints") }
func TestProcessesView(t *testing.T)   { ptTestPane(t, "Processes") }

// TestProcessesEnter: Enter debugs the process under the cursor (which
// starts on the debugged one), and does nothing on the debugged one.
func TestProcessesEnter(t *testing.T) {
	for _, tc := range []struct {
		keys []string
		want tea.Msg
	}{
		{[]string{"enter"}, nil},
		{[]string{"up", "enter"}, RunCommand{Line: "process 4241"}},
		{[]string{"down", "enter"}, RunCommand{Line: "process 4243"}},
		{[]string{"home", "enter"}, RunCommand{Line: "process 4240"}},
		{[]string{"end", "down", "enter"}, RunCommand{Line: "process 4243"}},
	} {
		p := ptSized(NewProcesses(ptContext(t, themes.Dark())), 78, 10, ptProcSnapshot())
		if got := ptRun(p, tc.keys...); got != tc.want {
			t.Errorf("keys %v: %v, want %v", tc.keys, got, tc.want)
		}
	}
}

// run presses keys and returns the message of the last command produced.
func ptRun(p Pane, keys ...string) tea.Msg {
	var msg tea.Msg
	for _, k := range keys {
		if cmd := p.Update(ptPress(k)); cmd != nil {
			msg = cmd()
		}
	}
	return msg
}

// ptKeysCase is keys pressed on a pane fresh from ptSnapshot and the
// command that a last key, pressed after them, runs.
type ptKeysCase struct {
	keys []string
	want string
}

// ptCheckRuns checks the command each case runs on a pane newPane makes,
// sized w×h, and that the pane keeps its size.
func ptCheckRuns(t *testing.T, newPane func() Pane, w, h int, last string, cases []ptKeysCase) {
	t.Helper()
	for _, tc := range cases {
		p := ptSized(newPane(), w, h, ptSnapshot())
		msg := ptRun(p, append(tc.keys, last)...)
		if got, ok := msg.(RunCommand); !ok || got.Line != tc.want {
			t.Errorf("keys %v: got %#v, want %q\n%s", tc.keys, msg, tc.want, p.View())
		}
		ptCheckSize(t, p.View(), w, h)
	}
}

func TestSourceCursor(t *testing.T) {
	ctx := ptContext(t, themes.Dark())
	ptCheckRuns(t, func() Pane { return NewSource(ctx) }, 40, 10, "b", []ptKeysCase{
		{nil, "break corrupt.c:24"},
		{[]string{"up"}, "break corrupt.c:23"},
		{[]string{"k", "k", "j"}, "break corrupt.c:23"},
		{[]string{"down", "down"}, "break corrupt.c:26"},
		{[]string{"home"}, "break corrupt.c:1"},
		{[]string{"home", "up"}, "break corrupt.c:1"},
		{[]string{"end"}, "break corrupt.c:43"},
		{[]string{"end", "down"}, "break corrupt.c:43"},
		{[]string{"pgup"}, "break corrupt.c:15"},
		{[]string{"pgdown"}, "break corrupt.c:33"},
		// A breakpoint already there: the same key deletes it.
		{[]string{"up", "up", "up", "up"}, "delete 1"},
		{[]string{"end", "up", "up"}, "delete 3"},
	})
}

func TestSourceFollowsCurrentLine(t *testing.T) {
	s := NewSource(ptContext(t, themes.NoColor()))
	ptSized(s, 40, 8, ptSnapshot())
	ptRun(s, "home")
	sn := ptSnapshot()
	sn.Moment, sn.Source.Current = "#120", 41
	s.SetSnapshot(sn)
	if s.cur.pos != 40 {
		t.Fatalf("cursor on line %d after a new snapshot, want the current line 41", s.cur.pos+1)
	}
	if !strings.Contains(ptText(s), "=> 41") {
		t.Errorf("current line 41 not visible:\n%s", s.View())
	}
	s.SetSnapshot(&debugger.Snapshot{Frames: []debugger.FrameInfo{{Function: "_dl_start"}}})
	if v := ptText(s); !strings.Contains(v, "no source for _dl_start") {
		t.Errorf("without source:\n%s", v)
	}
	if msg := ptRun(s, "b"); msg != nil {
		t.Errorf("Break without source gave %#v", msg)
	}
}

func TestDisasmBreak(t *testing.T) {
	ctx := ptContext(t, themes.Dark())
	ptCheckRuns(t, func() Pane { return NewDisassembly(ctx) }, 40, 10, "b", []ptKeysCase{
		{nil, "break *0x5555555551b9"},
		{[]string{"down"}, "break *0x5555555551bd"},
		{[]string{"home"}, "break *0x555555555199"},
		// Breakpoint 1 resolved to this address: the same key deletes it.
		{[]string{"home", "down", "down", "down"}, "delete 1"},
	})
}

func TestStackAndThreadsEnter(t *testing.T) {
	ctx := ptContext(t, themes.Dark())
	st := NewStack(ctx)
	ptSized(st, 40, 10, ptSnapshot())
	if msg := ptRun(st, "down", "enter"); msg != (RunCommand{Line: "frame 1"}) {
		t.Errorf("stack: %#v", msg)
	}
	if msg := ptRun(st, "end", "down", "enter"); msg != (RunCommand{Line: "frame 2"}) {
		t.Errorf("stack: %#v", msg)
	}
	th := NewThreads(ctx)
	ptSized(th, 40, 10, ptSnapshot())
	if msg := ptRun(th, "enter"); msg != (RunCommand{Line: "thread 7284"}) {
		t.Errorf("threads: %#v", msg)
	}
	if msg := ptRun(th, "down", "enter"); msg != (RunCommand{Line: "thread 7290"}) {
		t.Errorf("threads: %#v", msg)
	}
}

func TestBreakpointsDelete(t *testing.T) {
	p := NewBreakpoints(ptContext(t, themes.Dark()))
	ptSized(p, 40, 10, ptSnapshot())
	for _, tc := range []struct {
		keys []string
		want string
	}{
		{[]string{"x"}, "delete 1"},
		{[]string{"down", "delete"}, "delete 3"},
		{[]string{"end", "x"}, "delete 2"}, // the watchpoint, listed last
		{[]string{"enter"}, ""},
		{[]string{"space"}, "disable 1"},
		{[]string{"down", "down", "down", "space"}, "enable 5"}, // disabled
		{[]string{"end", "space"}, "disable 2"},
	} {
		msg := ptRun(p, append([]string{"home"}, tc.keys...)...)
		got, _ := msg.(RunCommand)
		if got.Line != tc.want {
			t.Errorf("keys %v: got %#v, want %q", tc.keys, msg, tc.want)
		}
	}
}

func TestLocalsWatch(t *testing.T) {
	ctx := ptContext(t, themes.Dark())
	ptCheckRuns(t, func() Pane { return NewLocals(ctx) }, 60, 20, "w", []ptKeysCase{
		{nil, "watch -l head"},
		{[]string{"down"}, "watch -l total"},
		{[]string{"down", "down", "space", "down", "down"}, "watch -l s.next"},
		{[]string{"down", "down", "right", "right", "right", "down", "down"}, "watch -l s.name[1]"},
		{[]string{"space", "down"}, "watch -l *(head)"},
		{[]string{"space", "down", "space", "down", "down"}, "watch -l head->next"},
		{[]string{"space", "down", "space", "down", "space", "down"}, "watch -l head->name[0]"},
		// Left goes back to the parent.
		{[]string{"down", "down", "space", "down", "down", "left"}, "watch -l s"},
	})
}

func TestLocalsExpandedSurvivesSnapshot(t *testing.T) {
	l := NewLocals(ptContext(t, themes.NoColor()))
	ptSized(l, 60, 20, ptSnapshot())
	ptRun(l, "down", "down", "space", "down", "down")
	sn := ptSnapshot()
	sn.Moment = "#120"
	sn.Locals[1].Children[1].Value = "0x0"
	l.SetSnapshot(sn)
	v := ptText(l)
	if !strings.Contains(v, "- s = ") || !strings.Contains(v, "next = 0x0") {
		t.Errorf("s not expanded after a new snapshot:\n%s", v)
	}
	if got := l.Selected(); got != "s.next" {
		t.Errorf("cursor on %q after a new snapshot, want s.next", got)
	}
	ptRun(l, "up", "up", "space")
	if v := ptText(l); !strings.Contains(v, "+ s = ") || strings.Contains(v, "next = 0x0") {
		t.Errorf("s not collapsed:\n%s", v)
	}
}

func TestLocalsLongValueTruncated(t *testing.T) {
	l := NewLocals(ptContext(t, themes.NoColor()))
	sn := ptSnapshot()
	sn.Locals[0].Value = strings.Repeat("9", 200)
	ptSized(l, 30, 5, sn)
	line := strings.Split(ptText(l), "\n")[1]
	if !strings.HasSuffix(ansi.Strip(line), "…") || ansi.StringWidth(line) != 30 {
		t.Errorf("long value not cut with …: %q", line)
	}
}

func TestRegistersChanged(t *testing.T) {
	for _, th := range ptThemes {
		r := NewRegisters(ptContext(t, th.theme()))
		ptSized(r, 78, 20, ptSnapshot())
		if r.Changed("rip") {
			t.Fatal("rip changed with no previous snapshot")
		}
		sn := ptSnapshot()
		sn.Moment, sn.Event = "#111", 111
		sn.Registers[16].Value = "0x5555555551c3"
		r.SetSnapshot(sn)
		if !r.Changed("rip") || r.Changed("rax") {
			t.Errorf("%s: changed rip=%v rax=%v, want true false", th.name, r.Changed("rip"), r.Changed("rax"))
		}
		if th.theme().NoColor && !strings.Contains(ptText(r), "0x5555555551c3*") {
			t.Errorf("no-color: rip not marked with *:\n%s", r.View())
		}
		// A snapshot of the same moment (after "break …") keeps the marks.
		same := ptSnapshot()
		same.Moment, same.Event = "#111", 111
		same.Registers[16].Value = "0x5555555551c3"
		r.SetSnapshot(same)
		if !r.Changed("rip") {
			t.Errorf("%s: the mark of rip was lost by a snapshot of the same moment", th.name)
		}
		// Toggle: the xmm registers.
		ptRun(r, "t")
		if v := ptText(r); !strings.Contains(v, "xmm15") || strings.Contains(v, "rip") {
			t.Errorf("toggle did not show xmm:\n%s", v)
		}
	}
}

func TestMemory(t *testing.T) {
	ctx := ptContext(t, themes.NoColor())
	m := NewMemory(ctx)
	m.SetSize(78, 9)
	m.SetSnapshot(ptSnapshot())
	if m.Refresh() != nil {
		t.Error("Refresh without an expression requested something")
	}
	if v := ptText(m); !strings.Contains(v, "no address to show") || !strings.Contains(v, "/ here types one") {
		t.Errorf("no hint:\n%s", v)
	}
	// "/" opens the editor; typed letters are text, not actions.
	ptRun(m, "/")
	if !m.Editing() {
		t.Fatal("/ did not start editing")
	}
	msg := ptRun(m, "b", "u", "f", "enter")
	if msg != (RequestMemory{Expr: "buf", Len: 8 * 16}) {
		t.Fatalf("enter gave %#v", msg)
	}
	if m.Editing() {
		t.Error("still editing after enter")
	}
	if msg := m.Refresh()(); msg != (RequestMemory{Expr: "buf", Len: 8 * 16}) {
		t.Errorf("Refresh gave %#v", msg)
	}
	if msg := ptRun(m, "enter"); msg != (RequestMemory{Expr: "buf", Len: 8 * 16}) {
		t.Errorf("enter gave %#v", msg)
	}
	// An answer to an older expression is dropped.
	m.Update(MemoryLoaded{Expr: "old", Addr: 1, Data: []byte{1}})
	if m.data != nil {
		t.Error("stale answer taken")
	}
	data := make([]byte, 64)
	data[0] = 0x10
	data[8] = 0x40
	m.Update(MemoryLoaded{Expr: "buf", Addr: 0x1000, Data: data})
	// Same moment, reloaded: nothing changed.
	m.Update(MemoryLoaded{Expr: "buf", Addr: 0x1000, Data: data})
	if strings.Contains(ptText(m), "*") {
		t.Errorf("changes marked without a new moment:\n%s", m.View())
	}
	sn := ptSnapshot()
	sn.Moment, sn.Event = "#111", 111
	m.SetSnapshot(sn)
	data2 := append([]byte(nil), data...)
	data2[3], data2[5] = 'A', 'B'
	m.Update(MemoryLoaded{Expr: "buf", Addr: 0x1000, Data: data2})
	if !m.changed(3) || !m.changed(5) || m.changed(4) {
		t.Errorf("changed bytes: 3=%v 4=%v 5=%v", m.changed(3), m.changed(4), m.changed(5))
	}
	if v := ptText(m); !strings.Contains(v, "000000001000: 10 00 00*41 00*42") {
		t.Errorf("changed bytes not marked:\n%s", v)
	}
	// The same moment again: the marks stay.
	m.Update(MemoryLoaded{Expr: "buf", Addr: 0x1000, Data: data2})
	if !m.changed(3) {
		t.Error("marks lost on a reload at the same moment")
	}
	// Follow the pointer at the second row: 0x40.
	if msg := ptRun(m, "down", "t"); msg != (RequestMemory{Expr: "0x40", Len: 8 * 16}) {
		t.Errorf("follow gave %#v", msg)
	}
	m.Update(MemoryLoaded{Expr: "0x40", Err: errors.New("Cannot access memory at address 0x40")})
	if v := ptText(m); !strings.Contains(v, "Cannot access memory at address 0x40") {
		t.Errorf("error not shown:\n%s", v)
	}
	// Esc leaves the editor without changing the expression.
	ptRun(m, "/", "x", "esc")
	if m.Editing() || m.Expr() != "0x40" {
		t.Errorf("after esc: editing=%v expr=%q", m.Editing(), m.Expr())
	}
	if msg := m.SetExpr("&total")(); msg != (RequestMemory{Expr: "&total", Len: 8 * 16}) {
		t.Errorf("SetExpr gave %#v", msg)
	}
	// 16 bytes a row when they fit, 8 otherwise.
	m.Update(MemoryLoaded{Expr: "&total", Addr: 0x2000, Data: data})
	if got := strings.Count(strings.Split(ptText(m), "\n")[1], " 00"); got != 7 {
		t.Errorf("78 columns: %d zero bytes in the first row, want 7 (8 a row)", got)
	}
	m.SetSize(100, 9)
	if got := strings.Count(strings.Split(ptText(m), "\n")[1], " 00"); got != 14 {
		t.Errorf("100 columns: %d zero bytes in the first row, want 14 (16 a row)", got)
	}
}

// TestEmptyPaneHints: a pane with nothing to show says why and what to do,
// within its size, at each kind of moment it can be empty at.
func TestEmptyPaneHints(t *testing.T) {
	ctx := ptContext(t, themes.NoColor())
	loader := &debugger.Snapshot{Frames: []debugger.FrameInfo{{Function: "_dl_start"}}, Registers: ptSnapshot().Registers}
	noVars := ptSnapshot()
	noVars.Args, noVars.Locals = nil, nil
	exited := &debugger.Snapshot{}
	for _, c := range []struct {
		name string
		pane Pane
		snap *debugger.Snapshot
		want []string
	}{
		{"source in the loader", NewSource(ctx), loader, []string{"no source for _dl_start", ":break main then c", "9 shows the instructions"}},
		{"source after the exit", NewSource(ctx), exited, []string{"no frame at this moment", "S or C go back"}},
		{"locals in the loader", NewLocals(ctx), loader, []string{"no debug information for _dl_start", ":break main then c"}},
		{"locals of a function without", NewLocals(ctx), noVars, []string{"no arguments or locals in", ":print EXPR"}},
		{"stack after the exit", NewStack(ctx), exited, []string{"no stack", "S or C go back"}},
		{"registers after the exit", NewRegisters(ctx), exited, []string{"no registers", "S or C go back"}},
		{"threads after the exit", NewThreads(ctx), exited, []string{"no threads", "S or C go back"}},
		{"disassembly", NewDisassembly(ctx), exited, []string{"no disassembly", ":disassemble FUNC"}},
		{"memory", NewMemory(ctx), loader, []string{"no address to show", "/ here types one"}},
		{"watch", NewWatch(ctx), loader, []string{"no watchpoints: w on a local, or :watch EXPR"}},
		{"breakpoints", NewBreakpoints(ctx), loader, []string{"no breakpoints: b on a source line, or :break LOCATION", "no watchpoints: w on a local"}},
		{"console", NewConsole(ctx), loader, []string{"no commands yet: : opens the prompt, ? lists the keys"}},
		{"llm", NewLLM(ctx), loader, []string{":ask QUESTION"}},
	} {
		for _, sz := range [][2]int{{100, 8}, {40, 10}} {
			ptSized(c.pane, sz[0], sz[1], c.snap)
			out := c.pane.View()
			ptCheckSize(t, out, sz[0], sz[1])
			// The words count, not where the wrapping put them.
			text := strings.Join(strings.Fields(ansi.Strip(out)), " ")
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("%s at %v: %q missing from\n%s", c.name, sz, w, ansi.Strip(out))
				}
			}
		}
	}
}

// TestSourceTitlePacked: the title says when the lines are the
// recording's copy of a file this machine lacks.
func TestSourceTitlePacked(t *testing.T) {
	ctx := ptContext(t, themes.Dark())
	for _, packed := range []bool{false, true} {
		sn := ptSnapshot()
		sn.Source.Packed = packed
		s := NewSource(ctx)
		ptSized(s, 40, 10, sn)
		want := "Source: corrupt.c"
		if packed {
			want += " (from the recording)"
		}
		if got := s.Title(); got != want {
			t.Errorf("packed %v: title %q, want %q", packed, got, want)
		}
	}
}
