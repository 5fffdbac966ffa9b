package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-dap"
)

// TestPackedSources: a program built in a directory of its own is
// recorded, its sources (and, stripped, its debug file) packed into the
// trace by record --with-sources or rewind pack; once the directory is
// gone the debugger still stops on the right source lines, lists them and
// says they come from the recording. Without packing, the same steps find
// no source: the lines shown come from the trace, not from the disk.
func TestPackedSources(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(srcPath("crash.c"))
	if err != nil {
		t.Fatal(err)
	}
	srcLines := strings.Split(string(src), "\n")
	mainLine := 0 // main's first statement: where break main stops
	for i, l := range srcLines {
		if strings.HasPrefix(l, "int main(") {
			mainLine = i + 2
			break
		}
	}
	if mainLine == 0 {
		t.Fatal("no main in crash.c")
	}
	for _, c := range []struct {
		name     string
		withSrc  bool // record --with-sources
		pack     bool // rewind pack after recording
		stripped bool // DWARF in a separate file, next to the program
	}{
		{name: "record --with-sources", withSrc: true},
		{name: "rewind pack", pack: true},
		{name: "stripped, rewind pack", pack: true, stripped: true},
		{name: "not packed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			srcDir, binDir := filepath.Join(dir, "src"), filepath.Join(dir, "bin")
			os.MkdirAll(srcDir, 0o755)
			os.MkdirAll(binDir, 0o755)
			srcFile := filepath.Join(srcDir, "crash.c")
			if err := os.WriteFile(srcFile, src, 0o644); err != nil {
				t.Fatal(err)
			}
			prog := filepath.Join(binDir, "crash")
			if err := compile("gcc", srcDir, "-g", "-O0", "-o", prog, "crash.c"); err != nil {
				t.Fatal(err)
			}
			debugFile := ""
			if c.stripped {
				debugFile = prog + ".debug"
				for _, args := range [][]string{
					{"--only-keep-debug", prog, debugFile},
					{"--strip-debug", "--add-gnu-debuglink=" + debugFile, prog},
				} {
					if err := compile("objcopy", binDir, args...); err != nil {
						t.Fatal(err)
					}
				}
			}
			trace := filepath.Join(dir, "t.rwd")
			opts := runOpts{}
			if c.withSrc {
				opts.RecordFlags = []string{"--with-sources"}
			}
			rec := recordOpts(t, opts, trace, prog)
			if rec.Code != 139 {
				t.Fatalf("record: exit %d, want 139\n%s", rec.Code, rec.Stderr)
			}
			report := string(rec.Stderr)
			if c.pack {
				r := run(t, runOpts{}, rewind(t), "pack", trace)
				if r.Code != 0 {
					t.Fatalf("pack: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
				}
				report = string(r.Stdout)
			}
			packed := c.withSrc || c.pack
			added := regexp.MustCompile(`(?m)^\s+added\s+source\s+` + regexp.QuoteMeta(srcFile) + ` \(`)
			if added.MatchString(report) != packed {
				t.Fatalf("pack's report names %s added: %v, want %v\n%s", srcFile, !packed, packed, report)
			}
			if c.stripped && !regexp.MustCompile(`(?m)^\s+added\s+debug\s+`+regexp.QuoteMeta(debugFile)+` .* for `+regexp.QuoteMeta(prog)).MatchString(report) {
				t.Fatalf("pack's report does not name the debug file %s\n%s", debugFile, report)
			}
			info := run(t, runOpts{}, rewind(t), "info", trace)
			wantInfo := regexp.MustCompile(`(?m)^packed:\s+[1-9]\d* source files? \(`)
			if !packed {
				wantInfo = regexp.MustCompile(`(?m)^packed:\s+no source or debug files`)
			}
			if !wantInfo.Match(info.Stdout) {
				t.Errorf("rewind info, packed line: want %v\n%s", wantInfo, info.Stdout)
			}

			// Here, the local file is used.
			cmds := []string{"break main", "continue", "info source", fmt.Sprintf("list %d,%d", mainLine, mainLine)}
			rs := batch(t, trace, cmds...)
			wantStop(t, rs[1], "breakpoint", "main", mainLine)
			wantOK(t, rs[2])
			if v, _ := rs[2]["value"].(map[string]any); v["origin"] != "local" || v["file"] != srcFile {
				t.Errorf("info source with the file here: %v", rs[2]["value"])
			}

			// The sources (and the debug file) go away.
			before, _ := os.ReadFile(trace)
			os.RemoveAll(srcDir)
			if debugFile != "" {
				os.Remove(debugFile)
			}
			rs = batch(t, trace, cmds...)
			st := wantStop(t, rs[1], "breakpoint", "main", mainLine)
			if st["fullname"] != srcFile {
				t.Errorf("stop in %v, want %s", st["fullname"], srcFile)
			}
			stopText := fmt.Sprintf("%d\t%s", mainLine, srcLines[mainLine-1])
			if strings.Contains(fmt.Sprint(rs[1]["text"]), stopText) != packed {
				t.Errorf("stop text %q: shows %q = %v, want %v", rs[1]["text"], stopText, !packed, packed)
			}
			checkDAPSource(t, trace, mainLine, src, packed)
			if !packed {
				if rs[2]["ok"] != true || !strings.Contains(fmt.Sprint(rs[2]["text"]), "cannot be read") {
					t.Errorf("info source without the file nor a copy: %v", rs[2])
				}
				if rs[3]["ok"] != false {
					t.Errorf("list without the file nor a copy: %v", rs[3])
				}
				return
			}
			wantOK(t, rs[2])
			if v, _ := rs[2]["value"].(map[string]any); v["origin"] != "recording" || v["file"] != srcFile || v["lines"] != float64(len(srcLines)-1) {
				t.Errorf("info source from the recording: %v (want %d lines)", rs[2]["value"], len(srcLines)-1)
			}
			if !strings.Contains(fmt.Sprint(rs[2]["text"]), "from the recording") {
				t.Errorf("info source does not say the file is the recording's: %q", rs[2]["text"])
			}
			wantOK(t, rs[3])
			list, _ := rs[3]["value"].(map[string]any)
			lines, _ := list["lines"].([]any)
			if list["origin"] != "recording" || len(lines) != 1 || lines[0].(map[string]any)["text"] != srcLines[mainLine-1] {
				t.Errorf("list %d: %v, want %q from the recording", mainLine, rs[3]["value"], srcLines[mainLine-1])
			}

			// Packing again, the sources gone, keeps the trace as it is.
			r := run(t, runOpts{}, rewind(t), "pack", trace)
			if r.Code != 0 || !strings.Contains(string(r.Stdout), "already holds these files, unchanged") {
				t.Errorf("pack again: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
			}
			if after, _ := os.ReadFile(trace); !bytes.Equal(before, after) {
				t.Errorf("packing again changed the trace")
			}
		})
	}
}

// TestPackRefusesUnfinished: a trace whose recording did not finish (no
// footer) is refused in one line, and left as it is.
func TestPackRefusesUnfinished(t *testing.T) {
	t.Parallel()
	trace := recorded(t, "crash.c", 139)
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.rwd")
	os.WriteFile(cut, data[:len(data)-8], 0o644) // inside the footer
	r := run(t, runOpts{}, rewind(t), "pack", cut)
	if r.Code == 0 || len(lines(r.Stderr)) != 1 || !strings.Contains(string(r.Stderr), "finished") {
		t.Errorf("pack of an unfinished trace: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	checkNoPanic(t, "pack", r.Stdout, r.Stderr)
	if after, _ := os.ReadFile(cut); !bytes.Equal(after, data[:len(data)-8]) {
		t.Errorf("the unfinished trace was changed")
	}
}

// checkDAPSource opens the trace in `rewind dap` at main's first line
// (where configurationDone goes) with the source file gone: a packed file
// comes as a sourceReference from the recording, whose source request
// gives its text; otherwise the frame's source is neither.
func checkDAPSource(t *testing.T, trace string, line int, text []byte, packed bool) {
	t.Helper()
	c := startDAP(t)
	c.ok("initialize", map[string]any{"adapterID": "rewind", "linesStartAt1": true})
	c.ok("launch", map[string]any{"trace": trace})
	c.event("initialized")
	c.ok("configurationDone", nil)
	entry := c.stopped("entry", line)
	frame := c.top(entry.Body.ThreadId)
	src := frame.Source
	switch {
	case src == nil || src.Path != "":
		t.Errorf("DAP frame source %+v: want no path (the file is gone)", src)
	case !packed:
		if src.SourceReference != 0 {
			t.Errorf("DAP frame source %+v: a reference without a packed file", src)
		}
	case src.SourceReference == 0 || src.Origin != "from the recording":
		t.Errorf("DAP frame source %+v: want a reference to the recording's copy", src)
	default:
		m := c.ok("source", map[string]any{"source": map[string]any{"sourceReference": src.SourceReference}, "sourceReference": src.SourceReference})
		if got := m.(*dap.SourceResponse).Body.Content; got != string(text) {
			t.Errorf("DAP source request: %d bytes, want the %d of the file", len(got), len(text))
		}
	}
	c.ok("disconnect", nil)
}
