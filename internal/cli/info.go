package cli

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

func newInfoCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "info TRACE",
		Short: "Summarise a recording: program, machine, threads, events, size",
		Long: `Summarises a recording: program, machine, threads, events, size. On an
unfinished or damaged trace it summarises the usable events, says in one line
on stderr why the rest is not usable, and exits 2.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInfo(os.Stdout, args[0])
		},
	}
}

var kindNames = map[trace.Kind]string{
	trace.KindExec: "exec", trace.KindSyscall: "syscall", trace.KindSyscallEntry: "syscall (blocking entry)",
	trace.KindSyscallExit: "syscall (blocking exit)", trace.KindSignal: "signal", trace.KindRdtsc: "rdtsc",
	trace.KindPreempt: "preemption", trace.KindCpuid: "cpuid", trace.KindThreadExit: "thread exit", trace.KindExit: "exit",
	trace.KindEnd: "end (recording stopped)", trace.KindSharedMem: "shared memory changed", trace.KindRdrand: "rdrand/rdseed",
	trace.KindSnapshot: "snapshot (attached)",
}

func runInfo(w io.Writer, path string) error {
	rd, err := trace.Open(path)
	if err != nil {
		return err
	}
	defer rd.Close()
	h := rd.Header()
	var (
		events   int64
		kinds    = map[trace.Kind]int64{}
		calls    = map[int32]int64{}
		threads  = map[int32]bool{}
		approx   int64
		buffered int64
		tscs     int64 // buffered rdtscs
		exitStat *int32
		duration int64
		procs    = trace.NewProcesses()
		port     portability
	)
	for {
		e, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		events++
		kinds[e.Kind]++
		threads[e.Tid] = true
		duration = e.Time
		if e.Kind == trace.KindSyscall || e.Kind == trace.KindSyscallEntry {
			calls[e.Syscall]++
		}
		if e.Kind == trace.KindPreempt && e.Flags&trace.FlagApprox != 0 {
			approx++
		}
		if e.Flags&trace.FlagBuffered != 0 {
			if e.Kind == trace.KindRdtsc {
				tscs++
			} else {
				buffered++
			}
		}
		if e.Kind == trace.KindExit && e.Tid == int32(h.Pid) && exitStat == nil {
			s := e.Status // the first process's: the status rewind record exited with
			exitStat = &s
		}
		procs.Observe(events-1, e)
		if e.Kind == trace.KindExec {
			port.observe(e)
		}
	}
	fmt.Fprintf(w, "trace:     %s\n", path)
	if st, err := os.Stat(path); err == nil {
		per := ""
		if events > 0 {
			per = fmt.Sprintf(", %.1f bytes/event", float64(st.Size())/float64(events))
		}
		if raw := rd.RawEvents(); raw > 0 {
			per += fmt.Sprintf("; %s of events stored uncompressed (rewind pack compresses what compresses)", trace.FormatSize(raw))
		}
		fmt.Fprintf(w, "size:      %d bytes%s\n", st.Size(), per)
	}
	fmt.Fprintf(w, "program:   %s\n", h.Program)
	fmt.Fprintf(w, "args:      %s\n", strings.Join(quoteArgs(h.Args), " "))
	fmt.Fprintf(w, "cwd:       %s\n", h.Cwd)
	fmt.Fprintf(w, "recorded:  %s by rewind %s (format %d), pid %d\n", h.Created.Format("2006-01-02 15:04:05 MST"), h.RewindVersion, h.FormatVersion, h.Pid)
	if h.Attached {
		fmt.Fprintf(w, "attached:  to process %d while it ran (rewind record -p): the recording starts from a snapshot\n", h.Pid)
	}
	fmt.Fprintf(w, "machine:   %s, kernel %s, %s\n", h.Hostname, h.Kernel, h.CPUModel)
	if h.CPU != nil {
		fmt.Fprintf(w, "cpu:       bound to CPU %d%s\n", *h.CPU, spreadNote(rd.Footer()))
	}
	if h.CPUSpec != "" {
		hidden := strings.Join(h.CPUHidden, " ")
		if hidden == "" {
			hidden = "none this CPU had"
		}
		fmt.Fprintf(w, "hidden:    CPU features the program was not shown (--cpu-features %s): %s\n", h.CPUSpec, hidden)
	}
	if h.Chaos {
		fmt.Fprintf(w, "chaos:     scheduling randomised, seed %d\n", h.ChaosSeed)
	}
	if h.ExeBuildID != "" {
		fmt.Fprintf(w, "build-id:  %s\n", h.ExeBuildID)
	}
	fmt.Fprintf(w, "sha256:    %s\n", h.ExeSHA256)
	fmt.Fprintf(w, "duration:  %.3fs\n", float64(duration)/1e9)
	if exitStat != nil {
		fmt.Fprintf(w, "exit:      %s\n", debugger.DescribeStatus(*exitStat))
	}
	if len(procs.List) > 1 {
		fmt.Fprintf(w, "processes: %d (rewind ps lists them)\n", len(procs.List))
	}
	fmt.Fprintf(w, "threads:   %d\n", len(threads))
	fmt.Fprintf(w, "events:    %d\n", events)
	for _, k := range sortedKinds(kinds) {
		fmt.Fprintf(w, "  %-26s %d\n", kindNames[k], kinds[k])
	}
	if approx > 0 {
		fmt.Fprintf(w, "  (%d preemptions are approximate: matched by fingerprint in replay)\n", approx)
	}
	if h.Hook != "" {
		fmt.Fprintf(w, "buffered:  %d system calls made by the hook page with no stop (image %s)\n", buffered, h.Hook)
		if tscs > 0 || len(h.Cpuid) > 0 {
			fmt.Fprintf(w, "patched:   %d rdtsc read by the hook page with no stop; cpuid answered from a table of %d\n", tscs, len(h.Cpuid))
		}
	}
	packed := rd.Packed()
	fmt.Fprintf(w, "stored:    %d blobs (the files mapped, the stacks and vDSOs of exec images)\n", rd.Blobs()-len(packed))
	fmt.Fprintf(w, "portable:  %s\n", port.describe(h))
	if len(packed) > 0 {
		fmt.Fprintf(w, "packed:    %s\n", packedSummary(packed))
	} else {
		fmt.Fprintf(w, "packed:    no source or debug files (rewind pack adds them)\n")
	}
	if len(calls) > 0 {
		fmt.Fprintf(w, "top system calls:\n")
		type kv struct {
			nr int32
			n  int64
		}
		var list []kv
		for nr, n := range calls {
			list = append(list, kv{nr, n})
		}
		sort.Slice(list, func(i, j int) bool { return list[i].n > list[j].n || list[i].n == list[j].n && list[i].nr < list[j].nr })
		for i, c := range list {
			if i == 10 {
				break
			}
			fmt.Fprintf(w, "  %-20s %d\n", syscalls.Name(int(c.nr)), c.n)
		}
	}
	st := rd.Status()
	if st.Message != "" {
		fmt.Fprintf(w, "state:     %s\n", st.Message)
	} else {
		fmt.Fprintf(w, "state:     complete\n")
	}
	if f := rd.Footer(); f != nil {
		for _, m := range f.Warnings {
			fmt.Fprintf(w, "warning:   %s\n", m)
		}
	}
	return traceStatusExit(st)
}

// spreadNote says which processes the recorder moved to other CPUs while
// they computed side by side (Footer.Spread), after the program's CPU.
func spreadNote(f *trace.Footer) string {
	if f == nil || len(f.Spread) == 0 {
		return ""
	}
	n := 0
	var cpus []string
	for _, c := range slices.Sorted(maps.Keys(f.Spread)) {
		n += f.Spread[c]
		cpus = append(cpus, strconv.Itoa(c))
	}
	what, where := "processes that computed side by side", "CPUs"
	if n == 1 {
		what = "process that computed side by side"
	}
	if len(cpus) == 1 {
		where = "CPU"
	}
	return fmt.Sprintf("; %d %s moved to %s %s", n, what, where, strings.Join(cpus, ", "))
}

func sortedKinds(m map[trace.Kind]int64) []trace.Kind {
	var ks []trace.Kind
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i] < ks[j] })
	return ks
}
