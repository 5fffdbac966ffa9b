package debugger

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rewind-debugger/rewind/engine/timeline"
	"github.com/rewind-debugger/rewind/internal/testprog"
)

func TestMain(m *testing.M) { testprog.Main(m) }

// corruptTrace is the recording FuzzCommand debugs.
var corruptTrace = testprog.Once(filepath.Join("..", "testdata", "source", "corrupt.c"))

// fuzzState is the session the inputs of FuzzCommand share in one process
// (a new one per input would load the DWARF again each time), and the
// moment each input starts from: the crash of corrupt.c, with a deep
// stack, locals and a corrupted list to look at.
type fuzzState struct {
	s     *Session
	crash timeline.Moment
}

var fuzzSession = sync.OnceValues(func() (*fuzzState, error) {
	trace, err := corruptTrace()
	if err != nil {
		return nil, err
	}
	s, err := Open(trace, Options{CheckpointBudget: 64 << 20})
	if err != nil {
		return nil, err
	}
	if r := s.Execute("continue"); !r.OK {
		s.Close()
		return nil, &commandError{r}
	}
	return &fuzzState{s: s, crash: s.tl.Now()}, nil
})

// commandError is a command that failed while setting up.
type commandError struct{ r Result }

func (e *commandError) Error() string { return e.r.Command + ": " + e.r.Error }

// reset brings the session back to where every input starts, so that an
// input's result does not depend on the ones before it (a crasher must
// replay alone): no breakpoints or watchpoints, at the crash, innermost
// frame of its thread selected, no value history, no listing under way.
func (st *fuzzState) reset() error {
	s := st.s
	if r := s.Execute("delete"); !r.OK {
		return &commandError{r}
	}
	if s.tl.Now() != st.crash {
		if err := s.tl.Goto(st.crash); err != nil {
			return err
		}
	}
	s.frame, s.thread = 0, 0
	s.printCount, s.values = 0, nil
	s.listFile, s.listLine = "", 0
	s.habits = habitState{}
	return nil
}

// fuzzSeeds are commands of every kind, from docs/commands.md and the tests,
// spelled for corrupt.c.
var fuzzSeeds = []string{
	"", "bogus", "break sum", "b corrupt.c:16", "br 24", "break *0x401156", "break *main+4", "tbreak set_name",
	"break sum if head->value == 1", "break corrupt.c:16 if i == 8", "break nosuch", "delete", "delete 1", "d 1 2",
	"enable", "disable 1", "watch total", "watch -l b->next", "watch *(int *)$sp", "rwatch total", "awatch n->value",
	"continue", "c", "reverse-continue", "rc", "step", "s 2", "next", "n 3", "finish", "fin", "reverse-finish",
	"stepi", "si 2", "nexti", "ni", "reverse-step", "rs", "reverse-next", "rn", "reverse-stepi", "rsi",
	"until", "u 25", "advance 24", "advance set_name",
	"print total", "p head->name", "p *head", "p/x total", "print/d n->value", "p $rip", "print $1 + $", "p $_",
	"print (long)&b->next - (long)b", "print head->next->next->next", "print *n->next@2", "print {int} $sp",
	"print sizeof(struct node)", "p (char)65", "call sum(head)", "output n->value", "output/x total",
	"ptype head", "ptype struct node", "whatis total", "whatis *head",
	"x/8xb $sp", "x/4i $pc", "x/s head->name", "x/2g &total", "x/3dw $sp", "x/c head", "x/2a $sp", "x $sp", "x/0x 0",
	"info registers", "info registers rip", "i r rax rbx", "info all-registers", "info locals", "info args",
	"info threads", "info breakpoints", "info watchpoints", "info frame", "info source", "info line 24",
	"info line sum", "info mappings", "info nosuch",
	"backtrace", "bt", "bt 1", "bt -1", "where", "frame 1", "f 0", "frame 99", "up", "down", "up 2", "down 9",
	"thread", "thread 1", "t 99999",
	"list", "l 20", "list sum", "list corrupt.c:10", "list 10,20", "list corrupt.c:10,12", "list 0", "list nosuch.c:1",
	"disassemble", "disas sum", "disassemble main,+8", "disassemble 0x0,0x10",
	"goto #10", "goto start", "goto end", "goto #1 hit 99 of 0x1", "goto #999999999", "goto", "when",
	"events", "events 5", "events 3 9", "events #3 #9", "events -1",
	"history total", "history *(int*)&total", "history nosuch",
	"display total", "display/x total", "display/i $pc", "undisplay 1", "info display", "condition 1 total > 3",
	"ignore 1 2", "printf \"%d %s %c %f %p %lu %%\\n\", total, head->name, 65, 1.5, head, 7", "echo a\\tb\\n",
	"set var total = 1", "print total = 2", "set print pretty on", "show print pretty", "set width 80",
	"bt full", "info symbol main", "info sharedlibrary", "info signals", "info inferiors", "checkpoint",
	"restart 1", "delete checkpoint 1", "info checkpoints", "kill", "run", "source /dev/null", "source /dev/zero",
}

// FuzzCommand runs arbitrary command lines on a session at the crash of
// corrupt.c: a command may fail, never panic, and its result holds
// together (an error when it failed, JSON for --json and MCP).
func FuzzCommand(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if costly(line) {
			return
		}
		st, err := fuzzSession()
		if err != nil {
			t.Skip(err)
		}
		if err := st.reset(); err != nil {
			t.Fatalf("reset: %v", err)
		}
		r := st.s.Execute(line)
		switch {
		case r.Command != strings.TrimSpace(line):
			t.Errorf("%q: Command %q", line, r.Command)
		case r.OK != (r.Error == ""):
			t.Errorf("%q: ok %v with error %q", line, r.OK, r.Error)
		case !r.OK && (r.Stop != nil || r.Value != nil):
			t.Errorf("%q: failed with a stop or a value: %+v", line, r)
		}
		if _, err := json.Marshal(r); err != nil {
			t.Errorf("%q: result %+v: %v", line, r, err)
		}
	})
}

// costly says whether a command's cost grows with a count it was given,
// far beyond what shows a parsing problem: N steps cost N replays, and
// x/Ns reads N pages.
func costly(line string) bool {
	name, args := splitCommand(strings.TrimSpace(line))
	switch name {
	case "step", "s", "next", "n", "reverse-step", "rs", "reverse-next", "rn",
		"stepi", "si", "nexti", "ni", "reverse-stepi", "rsi":
		n, err := strconv.Atoi(args)
		return err == nil && n > 4
	}
	if spec, ok := strings.CutPrefix(name, "x/"); ok {
		digits := spec[:len(spec)-len(strings.TrimLeft(spec, "0123456789"))]
		n, err := strconv.Atoi(digits)
		return err == nil && n > 64
	}
	return false
}
