package debugger

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/dwarf"
	"github.com/rewind-debugger/rewind/engine/timeline"
)

// failure is the failure why starts from, and what the chain needs of it.
type failure struct {
	WhyFailure
	tid int32
	// threadEnds are the events where the process's threads ended.
	threadEnds map[int32]int64
	// verdict is said when there is no value to follow.
	verdict string
}

// findFailure goes to the failure and returns it, with the location that
// holds the bad value there (nil when there is none to follow).
func (s *Session) findFailure() (*failure, *whyCursor, error) {
	fe, err := s.scanFailure()
	if err != nil {
		return nil, nil, err
	}
	f, cur, err := s.failureOf(fe)
	if f != nil {
		f.threadEnds = fe.threadEnds
	}
	return f, cur, err
}

// failureOf tells which failure the events show, and goes there.
func (s *Session) failureOf(fe *failureEvents) (*failure, *whyCursor, error) {
	failed := fe.killedBy != 0 || fe.exitCode != 0
	if !fe.exited {
		failed = true // cut short: the last fault or error is what there is
	}
	switch {
	case fe.killedBy == int32(unix.SIGABRT):
		return s.abortFailure(fe)
	case fe.fault >= 0 && failed:
		return s.faultFailure(fe)
	case failed && fe.stderr >= 0:
		return s.messageFailure(fe, fe.stderr, fe.stderrTid, "stderr", fe.stderrAll)
	case failed && fe.stdout >= 0:
		return s.messageFailure(fe, fe.stdout, fe.stdoutTid, "stdout", fe.stdoutAll)
	case fe.killedBy != 0:
		return s.endFailure(fmt.Sprintf("killed by %s", unix.SignalName(unix.Signal(fe.killedBy))))
	case fe.exitCode != 0:
		return s.endFailure(fmt.Sprintf("exit status %d", fe.exitCode))
	}
	return nil, nil, errNoFailure
}

// userFrame is the first frame with a source line (the program's code
// rather than the C library's), and its level.
func (s *Session) userFrame(tid int32) (int, uint64) {
	frames, err := s.stack(tid)
	if err != nil || len(frames) == 0 {
		return 0, 0
	}
	for i, f := range frames {
		pc := f.PC
		if i > 0 {
			pc-- // a caller's line is the call's
		}
		if s.userCode(pc) {
			return i, pc
		}
	}
	return 0, frames[0].PC
}

// inLibrary says whether pc is in a system library (the C library has
// lines too where its debug information is installed).
func (s *Session) inLibrary(pc uint64) bool {
	img := s.symbols().ImageAt(pc)
	if img != nil && (strings.Contains(img.Path, "/lib/") || strings.Contains(img.Path, "/lib64/")) {
		return true
	}
	// The languages' own libraries, linked into the program.
	if l, ok := s.symbols().LineAt(pc); ok {
		if strings.HasPrefix(l.File, "/rustc/") || (s.goRoot() != "" && strings.HasPrefix(l.File, s.goRoot())) {
			return true
		}
	}
	fn := s.FunctionAt(pc)
	for _, p := range []string{"std::", "core::", "alloc::", "runtime.", "__rust"} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// userCode says whether pc is in the program's own code: with lines, not
// in a system library.
func (s *Session) userCode(pc uint64) bool {
	_, ok := s.symbols().LineAt(pc)
	return ok && !s.inLibrary(pc)
}

// failureAt fills the failure's place and stack at the current moment.
func (s *Session) failureAt(f *failure, tid int32) {
	f.tid = tid
	s.thread, s.frame = tid, 0
	_, pc := s.userFrame(tid)
	f.Place = s.place(tid, pc)
	f.Stack = s.shortStack(tid)
}

// maxWhyFrames bounds the failure's stack: the frames that matter are the
// innermost.
const maxWhyFrames = 12

// shortStack is the backtrace of thread tid, a line a frame: the function
// and its line, without the arguments (a Go *testing.T is pages long).
func (s *Session) shortStack(tid int32) []string {
	frames, err := s.stack(tid)
	if err != nil {
		return nil
	}
	var out []string
	for i, fr := range frames {
		if i == maxWhyFrames {
			out = append(out, fmt.Sprintf("... %d more", len(frames)-i))
			break
		}
		pc := fr.PC
		if i > 0 {
			pc--
		}
		var info StopInfo
		s.placeInfo(&info, pc)
		line := fmt.Sprintf("#%d  %s", i, info.Function)
		if info.Function == "" {
			line = fmt.Sprintf("#%d  %#x", i, fr.PC)
		}
		if info.File != "" {
			line += fmt.Sprintf(" at %s:%d", info.File, info.Line)
		}
		out = append(out, line)
	}
	return out
}

// goRoot is the directory of a Go program's standard library sources,
// read from where its runtime's lines are ("" for another program).
func (s *Session) goRoot() string {
	if !s.gorootRead {
		s.gorootRead = true
		for _, fn := range s.symbols().FindFunction("runtime.main") {
			if l, ok := s.symbols().LineAt(fn.Low); ok {
				if i := strings.Index(l.File, "/src/runtime/"); i > 0 {
					s.goroot = l.File[:i+len("/src/")]
				}
			}
		}
	}
	return s.goroot
}

// endFailure is a failure with nothing to follow: the end of the process.
func (s *Session) endFailure(desc string) (*failure, *whyCursor, error) {
	if err := s.tl.Goto(s.tl.End()); err != nil {
		return nil, nil, err
	}
	f := &failure{WhyFailure: WhyFailure{Kind: "exit", Description: desc}}
	s.failureAt(f, s.tl.Now().Tid)
	f.verdict = "The program ended so without a fault or a message on stderr: no bad value to follow."
	return f, nil, nil
}

// messageFailure is a non-zero exit: the failure is the last message the
// program wrote (on stderr, else on stdout, where test runners report),
// where its stack shows which code reported it.
func (s *Session) messageFailure(fe *failureEvents, event int64, tid int32, stream, all string) (*failure, *whyCursor, error) {
	text := failureText(all)
	if err := s.tl.Goto(timeline.Moment{Event: event + 1, Tid: tid}); err != nil {
		return nil, nil, err
	}
	desc := fmt.Sprintf("exit status %d after writing to %s: %q", fe.exitCode, stream, text)
	if fe.killedBy != 0 {
		desc = fmt.Sprintf("killed by %s after writing to %s: %q", unix.SignalName(unix.Signal(fe.killedBy)), stream, text)
	}
	f := &failure{WhyFailure: WhyFailure{Kind: "exit", Description: desc}}
	s.failureAt(f, tid)
	f.Reported = s.reportedAt(text)
	if f.Reported == nil {
		f.Reported = s.reportedAt(all)
	}
	where := placeWhere(f.Place)
	if f.Reported != nil {
		where = placeWhere(*f.Reported)
	}
	f.verdict = fmt.Sprintf("The program reported the failure itself, at %s: no faulting value to follow from there (origin EXPR follows one you choose).", where)
	return f, nil, nil
}

// sourcePosRE matches a source position a message names (a test's
// "fails_test.go:16", a panic's "main.rs:25:22", an assert's "a.c:30").
var sourcePosRE = regexp.MustCompile(`([A-Za-z0-9_./+-]+\.(?:go|c|h|cc|cpp|cxx|hpp|rs|zig|py)):(\d+)`)

// reportedAt is the place of the program's code a failure message names,
// when the debug information knows it.
func (s *Session) reportedAt(msg string) *WhyPlace {
	m := sourcePosRE.FindStringSubmatch(msg)
	if m == nil {
		return nil
	}
	lines, err := s.resolveSource(m[1] + ":" + m[2])
	if err != nil || len(lines) == 0 {
		// A file the debug information does not know (a Python test):
		// its line, from the file where the program ran.
		n, _ := strconv.Atoi(m[2])
		path := m[1]
		if !filepath.IsAbs(path) {
			path = filepath.Join(s.Header().Cwd, path)
		}
		p := &WhyPlace{File: filepath.Base(m[1]), Line: n}
		if src := s.sourceLine(path, n); src != "" {
			_, text, _ := strings.Cut(src, "\t")
			p.Source = strings.TrimSpace(text)
		}
		return p
	}
	l := lines[0]
	p := &WhyPlace{PC: fmt.Sprintf("%#x", l.Addr), Function: s.FunctionAt(l.Addr), File: dwarf.ShortFile(l.File), Line: l.Line}
	if src := s.sourceLine(l.File, l.Line); src != "" {
		_, text, _ := strings.Cut(src, "\t")
		p.Source = strings.TrimSpace(text)
	}
	return p
}
