package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// batchStep is one -ex command or one -x file of a batch.
type batchStep struct {
	text   string
	isFile bool
}

// batchScript is the -ex and -x arguments in the order given: gdb runs
// them in that order.
type batchScript []batchStep

// scriptFlag is the pflag value of -ex (isFile false) and -x (true), both
// appending to one script.
type scriptFlag struct {
	script *batchScript
	isFile bool
}

func (f scriptFlag) String() string { return "" }

// Set appends one argument to the script.
func (f scriptFlag) Set(v string) error {
	*f.script = append(*f.script, batchStep{v, f.isFile})
	return nil
}

// Type names the value in --help.
func (f scriptFlag) Type() string {
	if f.isFile {
		return "FILE"
	}
	return "CMD"
}

// commands expands the script: each -x file's lines (without blanks and
// # comments) where the file was given.
func (sc batchScript) commands() ([]string, error) {
	var cmds []string
	for _, st := range sc {
		if !st.isFile {
			cmds = append(cmds, st.text)
			continue
		}
		data, err := os.ReadFile(st.text)
		if err != nil {
			return nil, err
		}
		for _, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				cmds = append(cmds, l)
			}
		}
	}
	return cmds, nil
}

// runBatch runs debugger commands without the UI, -ex commands and -x
// files in the order given, printing one result each (one JSON object a
// line with --json). quit ends the batch.
func runBatch(path string, o *replayOptions) error {
	cmds, err := o.script.commands()
	if err != nil {
		return err
	}
	s, err := openSession(path, o.sessionOptions(), warnLine)
	if err != nil {
		return err
	}
	defer s.Close()
	if o.session {
		restoreSession(s, path)
	}
	enc := json.NewEncoder(os.Stdout)
	lastOK := true
	prog := &batchProgress{out: os.Stderr, after: 2 * time.Second, every: time.Second}
	s.SetProgress(prog.update)
	for _, c := range cmds {
		prog.begin(c)
		res := s.Execute(c)
		lastOK = res.OK
		if o.json {
			if err := enc.Encode(res); err != nil {
				return err
			}
			continue
		}
		fmt.Printf("(rewind) %s\n", c)
		if res.Text != "" {
			// output's and echo's text ends where it says (gdb adds no
			// newline); the others end their line.
			fmt.Print(res.Text)
			if !strings.HasSuffix(res.Text, "\n") && !res.Unterminated() {
				fmt.Println()
			}
		}
		if res.Quit {
			break
		}
	}
	if !lastOK {
		// As gdb's batch mode: the status says whether the last command
		// succeeded, so that scripts can test it.
		return &exitError{1}
	}
	return nil
}

// batchProgress tells on stderr how far a long command got, so that a
// script's user sees a reverse search of minutes is working: nothing for
// the first seconds (most commands end before), then one line a second.
type batchProgress struct {
	out          io.Writer
	after, every time.Duration
	cmd          string
	start, last  time.Time
}

// begin starts the clock for a command.
func (p *batchProgress) begin(cmd string) {
	p.cmd, p.start, p.last = cmd, time.Now(), time.Time{}
}

// update is the session's progress callback; batch mode never cancels.
func (p *batchProgress) update(done, total int64) bool {
	now := time.Now()
	if now.Sub(p.start) < p.after || now.Sub(p.last) < p.every {
		return true
	}
	p.last = now
	pct := 0
	if total > 0 {
		pct = int(min(100, done*100/total))
	}
	fmt.Fprintf(p.out, "rewind: %s: %d%% (%d of %d events replayed)\n", p.cmd, pct, done, total)
	return true
}
