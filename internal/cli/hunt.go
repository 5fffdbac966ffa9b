package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/record"
	"github.com/rewind-debugger/rewind/engine/trace"
	"github.com/rewind-debugger/rewind/internal/frontend"
	"github.com/spf13/pflag"
)

// Hunting a failure that will not reproduce (rewind record --until-fail):
// the program is recorded again and again, J runs at a time, each by a
// rewind of its own bound to a CPU of its own, until one fails. The first
// failing recording and the last passing one are kept, the rest deleted.

// hunt is what --until-fail was asked.
type hunt struct {
	runs   int            // at most this many runs
	jobs   int            // at a time
	failOn *regexp.Regexp // output that makes a run a failure (nil: none)
	out    string         // -o: the failing recording's path
	flags  []string       // record's flags each run passes on (--chaos…)
	args   []string       // PROG ARGS
}

// huntRun is one run's outcome.
type huntRun struct {
	n       int
	cpu     int
	trace   string
	code    int    // its exit status, as record's
	matched bool   // --fail-on matched its output
	output  []byte // the end of its output
	took    time.Duration
	err     error // rewind itself failed (the trace, the start)
}

func (r *huntRun) failed() bool { return r.err == nil && (r.code != 0 || r.matched) }

// maxHuntOutput bounds the output of a run kept to match and show.
const maxHuntOutput = 1 << 20

// runHunt runs h and returns the exit status rewind record exits with: the
// failing run's (1 where only its output made it fail), 0 when every run
// passed.
func runHunt(h hunt) error {
	prog, err := record.ResolveProgram(h.args[0])
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("--until-fail: %w", err)
	}
	// Beside where the kept recordings go: they are renamed there.
	where := "."
	if h.out != "" {
		where = filepath.Dir(h.out)
	}
	tmp, err := os.MkdirTemp(where, ".rewind-hunt-")
	if err != nil {
		return traceFailed(fmt.Errorf("%w: --until-fail: %w", trace.ErrWrite, err))
	}
	defer os.RemoveAll(tmp)
	cpus := huntCPUs(h.jobs)
	start := time.Now()
	var (
		mu       sync.Mutex
		next     = 1
		stop     bool
		results  []*huntRun
		wg       sync.WaitGroup
		progress = os.Stderr
	)
	for w := 0; w < len(cpus); w++ {
		wg.Add(1)
		go func(cpu int) {
			defer wg.Done()
			for {
				mu.Lock()
				if stop || next > h.runs {
					mu.Unlock()
					return
				}
				n := next
				next++
				mu.Unlock()
				r := h.runOnce(self, tmp, n, cpu)
				mu.Lock()
				results = append(results, r)
				status := "passed"
				switch {
				case r.err != nil:
					status = "rewind failed: " + oneLine(r.err.Error())
					stop = true
				case r.failed():
					status = fmt.Sprintf("FAILED (exit %d", r.code)
					if r.matched {
						status += ", output matched --fail-on"
					}
					status += ")"
					stop = true
				}
				fmt.Fprintf(progress, "rewind: run %d on CPU %d: %s in %.2fs\n", r.n, r.cpu, status, r.took.Seconds())
				mu.Unlock()
			}
		}(cpus[w])
	}
	wg.Wait()
	return h.conclude(results, prog, time.Since(start), len(cpus))
}

// huntCPUs picks the CPUs runs are bound to: jobs of those rewind may use
// (0: all of them).
func huntCPUs(jobs int) []int {
	if jobs <= 0 {
		jobs = 1 << 10
	}
	var set unix.CPUSet
	var cpus []int
	if unix.SchedGetaffinity(0, &set) == nil {
		for c := 0; c < 1024 && len(cpus) < jobs; c++ {
			if set.IsSet(c) {
				cpus = append(cpus, c)
			}
		}
	}
	if len(cpus) == 0 {
		cpus = []int{0}
	}
	return cpus
}

// runOnce records run n on cpu, into dir.
func (h *hunt) runOnce(self, dir string, n, cpu int) *huntRun {
	r := &huntRun{n: n, cpu: cpu, trace: filepath.Join(dir, fmt.Sprintf("run-%d.rwd", n))}
	args := append([]string{"record", "-o", r.trace, "--bind-to-cpu", strconv.Itoa(cpu)}, h.flags...)
	args = append(append(args, "--"), h.args...)
	cmd := exec.Command(self, args...)
	var out tailBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 := time.Now()
	err := cmd.Run()
	r.took = time.Since(t0)
	r.output = out.Bytes()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
		if ws, ok := ee.Sys().(unix.WaitStatus); ok && ws.Signaled() {
			r.err = fmt.Errorf("rewind was killed by %v", ws.Signal())
		}
	default:
		r.err = err
	}
	if r.err == nil && r.code == exitTraceFailed {
		r.err = fmt.Errorf("run %d: %s", n, lastLine(r.output))
	}
	if _, serr := os.Stat(r.trace); r.err == nil && serr != nil {
		r.err = fmt.Errorf("run %d left no recording: %s", n, lastLine(r.output))
	}
	r.matched = h.failOn != nil && h.failOn.Match(r.output)
	return r
}

// conclude keeps the first failing recording and the last passing one,
// reports the hunt, and returns record's exit status.
func (h *hunt) conclude(results []*huntRun, prog string, took time.Duration, jobs int) error {
	var fail, pass *huntRun
	var broken error
	failures, runs := 0, 0
	for _, r := range results {
		switch {
		case r.err != nil:
			if broken == nil {
				broken = r.err
			}
			continue
		case r.failed():
			failures++
			if fail == nil || r.n < fail.n {
				fail = r
			}
		default:
			if pass == nil || r.n > pass.n {
				pass = r
			}
		}
		runs++
	}
	base := filepath.Base(prog)
	var kept []string
	if fail != nil {
		path, err := keepTrace(fail.trace, h.out, base+"-fail")
		if err != nil {
			return traceFailed(err)
		}
		kept = append(kept, fmt.Sprintf("%s (run %d, failed%s)", displayPath(path), fail.n, seedOf(path)))
	}
	if pass != nil {
		want := ""
		if h.out != "" {
			want = strings.TrimSuffix(h.out, ".rwd") + "-pass.rwd"
		}
		path, err := keepTrace(pass.trace, want, base+"-pass")
		if err != nil {
			return traceFailed(err)
		}
		kept = append(kept, fmt.Sprintf("%s (run %d, passed%s)", displayPath(path), pass.n, seedOf(path)))
	}
	per := time.Duration(0)
	if runs > 0 {
		per = took / time.Duration(runs)
	}
	fmt.Fprintf(os.Stderr, "rewind: %d runs, %d failed, %.2fs a run (%d at a time, %.1fs in all)", runs, failures, per.Seconds(), jobs, took.Seconds())
	if len(kept) > 0 {
		fmt.Fprintf(os.Stderr, "; kept %s", strings.Join(kept, " and "))
	}
	fmt.Fprintln(os.Stderr)
	if fail != nil {
		os.Stderr.Write(tailLines(fail.output, 12))
	}

	switch {
	case broken != nil:
		return traceFailed(broken)
	case fail == nil:
		return nil
	case fail.code != 0:
		return &exitError{fail.code}
	}
	return &exitError{1}
}

// keepTrace moves a run's recording to want, or to the first free
// PREFIX-N.rwd, and returns where it went.
func keepTrace(from, want, prefix string) (string, error) {
	if want != "" {
		abs, err := filepath.Abs(want)
		if err == nil {
			err = os.Rename(from, abs)
		}
		if err != nil {
			return "", fmt.Errorf("%w: keep %s: %w", trace.ErrWrite, want, err)
		}
		return abs, nil
	}
	// A link, then the old name gone: an existing file is never replaced.
	abs, err := frontend.ClaimName("", prefix, func(abs string) error { return os.Link(from, abs) })
	if err != nil {
		if !errors.Is(err, trace.ErrWrite) {
			err = fmt.Errorf("%w: keep %s: %w", trace.ErrWrite, abs, err)
		}
		return "", err
	}
	os.Remove(from)
	return abs, nil
}

// seedOf names the chaos seed of a recording made with --chaos.
func seedOf(path string) string {
	rd, err := trace.Open(path)
	if err != nil {
		return ""
	}
	defer rd.Close()
	if h := rd.Header(); h.Chaos {
		return fmt.Sprintf(", chaos seed %d", h.ChaosSeed)
	}
	return ""
}

// tailBuffer keeps the last maxHuntOutput bytes written to it.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - maxHuntOutput; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

// Bytes returns what the buffer holds.
func (t *tailBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return bytes.Clone(t.b)
}

// lastLine is the last non-empty line of b.
func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// tailLines is the last n lines of b, each indented, to show a failing
// run's end.
func tailLines(b []byte, n int) []byte {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var out bytes.Buffer
	for _, l := range lines {
		// (Not the run's own rewind naming a recording since moved.)
		if l != "" && !strings.HasPrefix(l, "rewind: recorded ") {
			fmt.Fprintf(&out, "  | %s\n", l)
		}
	}
	return out.Bytes()
}

// huntFlags checks the flags of --until-fail and --keep-on-failure.
func huntFlags(flags *pflag.FlagSet, hunting bool, o *recordOptions) error {
	switch {
	case !hunting && (flags.Changed("jobs") || flags.Changed("fail-on")):
		return errors.New("-j and --fail-on need --until-fail")
	case !hunting:
		if o.keepOnFailure && (o.pid != 0 || o.keepLast != 0) {
			return errors.New("--keep-on-failure is for a program rewind starts, recorded whole")
		}
		return nil
	case o.pid != 0 || o.keepLast != 0 || flags.Changed("bind-to-cpu"):
		return errors.New("--until-fail records a program it starts, whole, on CPUs it picks: not with -p, --keep-last or --bind-to-cpu")
	case o.keepOnFailure:
		return errors.New("--until-fail keeps the failing recording already: not with --keep-on-failure")
	case o.untilFail < 1:
		return fmt.Errorf("--until-fail=%d: at least one run", o.untilFail)
	case o.jobs < 0:
		return fmt.Errorf("-j %d: at least one run at a time", o.jobs)
	}
	return nil
}

// newHunt is what record's flags ask of a hunt for args.
func newHunt(flags *pflag.FlagSet, o *recordOptions, args []string) (hunt, error) {
	h := hunt{runs: o.untilFail, jobs: o.jobs, out: o.out, args: args}
	if o.failOn != "" {
		// Line by line, as grep matches: ^ and $ are a line's.
		re, err := regexp.Compile("(?m)" + o.failOn)
		if err != nil {
			return h, fmt.Errorf("--fail-on %q: %w", o.failOn, err)
		}
		h.failOn = re
	}
	for _, f := range []string{"chaos", "chaos-seed", "no-buffer", "serial", "with-sources", "cpu-features"} {
		if fl := flags.Lookup(f); fl.Changed {
			h.flags = append(h.flags, "--"+f+"="+fl.Value.String())
		}
	}
	return h, nil
}
