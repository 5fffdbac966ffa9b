package tracediff

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/rewind-debugger/rewind/debugger"
	"github.com/rewind-debugger/rewind/engine/syscalls"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// item is one step of a thread's history as the diff compares it: a system
// call (one that blocked counts once, at its exit: whether a call blocks
// depends on timing, not on what the program did), a signal, a trap, a
// preemption, an exec, an exit.
type item struct {
	ev int64 // its event number
	// next is the thread's next event (a blocking call's entry
	// included), -1 for none: at that moment the thread stands just
	// after this step.
	next int64
	key  string // what aligns two histories: "read", "signal SIGALRM", "rdtsc"…
	// name is the system call's name ("" for other kinds).
	name string
	// args are the arguments that must agree, addresses left out.
	args []string
	// result is the call's result (with its errno), or a trap's value.
	result string
	// out is the memory the call wrote (a read's data, a timespec), up
	// to keptOut bytes; outSum the hash of more.
	out    []byte
	outSum uint64
	// hash is the hash of the bytes a write-like call wrote.
	hash uint64
	// path is the file the descriptor of a read-like call names, when the
	// recording opened it.
	path string
	// text is the strace-style line.
	text string
	// loader marks a cycle-counter read by the dynamic loader, which every
	// run makes with another value before the program's code runs.
	loader bool
	// atRandom is an exec's AT_RANDOM bytes, new at every exec.
	atRandom []byte
	// tcacheKey marks glibc's malloc reading the key of its tcache.
	tcacheKey bool
	// outerParent marks a getppid of the first process: its parent is
	// the recorder, another process each run.
	outerParent bool
}

// thread is one thread's history.
type thread struct {
	tid   int32
	items []item
	// last is the index of the item whose next event is still to come.
	last int
}

// process is one recorded process: its threads in order of creation.
type process struct {
	pid     int32
	born    int64
	exe     string
	args    []string
	threads []*thread
	// byTid finds a thread of the process.
	byTid map[int32]*thread
	// fds maps the descriptors the process opened to their paths, to tell
	// a read of /dev/urandom from one of a file.
	fds map[int64]string
	// loader are the address ranges of the dynamic loader's code.
	loader [][2]uint64
	// tcacheKeyed is set once glibc's malloc read its tcache key.
	tcacheKeyed bool
	// tp is the process as the trace tells it.
	tp *trace.Process
}

// recording is a trace read for the diff.
type recording struct {
	path   string
	header *trace.Header
	events int64
	procs  []*process
	// notice says why only part of the trace was usable ("" when whole).
	notice string
}

// load reads the events of a trace into per-process, per-thread histories.
func load(path string) (*recording, error) {
	rd, err := trace.Open(path)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	r := &recording{path: path, header: rd.Header()}
	ps := trace.NewProcesses()
	byProc := map[*trace.Process]*process{}
	entries := map[int32]*trace.Event{}
	for i := int64(0); ; i++ {
		e, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		r.events = i + 1
		ps.Observe(i, e)
		tp := ps.Of(e.Tid)
		if tp == nil {
			// The thread's exit removed it: its process is the last one
			// that had it.
			tp = lastWith(ps.List, e.Tid)
		}
		if tp == nil {
			continue
		}
		p := byProc[tp]
		if p == nil {
			p = &process{pid: tp.Pid, born: tp.Born, byTid: map[int32]*thread{}, fds: map[int64]string{}, tp: tp}
			byProc[tp] = p
			r.procs = append(r.procs, p)
		}
		p.exe, p.args = tp.Exe, tp.Args
		th := p.byTid[e.Tid]
		if th == nil {
			th = &thread{tid: e.Tid, last: -1}
			p.byTid[e.Tid] = th
			p.threads = append(p.threads, th)
		}
		if th.last >= 0 && th.items[th.last].next < 0 {
			th.items[th.last].next = i
		}
		if e.Kind == trace.KindSyscallEntry {
			entries[e.Tid] = e
			continue
		}
		var entry *trace.Event
		if e.Kind == trace.KindSyscallExit {
			entry = entries[e.Tid]
			delete(entries, e.Tid)
		}
		if it, ok := p.itemOf(i, e, entry); ok {
			it.compact()
			th.items, th.last = append(th.items, it), len(th.items)
		}
	}
	r.notice = rd.Truncated()
	if r.events == 0 {
		return nil, fmt.Errorf("%s: no events", path)
	}
	for _, p := range r.procs {
		p.sortThreads()
	}
	return r, nil
}

// sortThreads puts a process's threads in their order of creation, which
// scheduling does not change (their first events' order it does).
func (p *process) sortThreads() {
	rank := map[int32]int{}
	for i, tid := range p.tp.Tids {
		rank[tid] = i + 1
	}
	slices.SortStableFunc(p.threads, func(a, b *thread) int {
		ra, rb := rank[a.tid], rank[b.tid]
		if ra == 0 {
			ra = len(rank) + 1
		}
		if rb == 0 {
			rb = len(rank) + 1
		}
		return ra - rb
	})
}

// forkCalls make processes and threads.
var forkCalls = map[string]bool{"clone": true, "clone3": true, "fork": true, "vfork": true}

// keptOut is how much of a call's output an item keeps as it is: enough
// for the ids a clone writes; a whole read's data is kept as its hash.
const keptOut = 64

// compact replaces a long output by its hash: a recording's reads can be
// larger than memory.
func (it *item) compact() {
	if len(it.out) > keptOut {
		h := fnv.New64a()
		h.Write(it.out)
		it.out, it.outSum = nil, h.Sum64()
	}
}

// lastWith returns the last process that had thread tid.
func lastWith(list []*trace.Process, tid int32) *trace.Process {
	for i := len(list) - 1; i >= 0; i-- {
		for _, t := range list[i].Tids {
			if t == tid {
				return list[i]
			}
		}
	}
	return nil
}

// itemOf makes the item of event i; snapshots and hook bookkeeping are
// not steps of the program.
func (p *process) itemOf(i int64, e, entry *trace.Event) (item, bool) {
	info := debugger.EventRecord(i, e, entry)
	it := item{ev: i, next: -1, text: info.Text}
	switch e.Kind {
	case trace.KindSyscall, trace.KindSyscallExit:
		p.syscallItem(&it, &info, e, entry)
	case trace.KindSignal:
		it.key = "signal " + info.Signal
		it.args = []string{info.Code, info.Addr}
	case trace.KindExec:
		it.key = "exec"
		// Where the program lies and how argv[0] names it are not what
		// it does: two builds in two directories are the same program.
		exe, args, _ := trace.ExecInfo(e)
		it.args = []string{path.Base(exe)}
		if len(args) > 1 {
			it.args = append(it.args, args[1:]...)
		}
		for _, m := range e.Mem {
			it.atRandom = append(it.atRandom, m.Data...)
		}
		p.loader = loaderRanges(e)
	case trace.KindRdtsc:
		it.key = "rdtsc"
		it.result = fmt.Sprintf("%#x %#x", e.Value, e.Aux)
		it.loader = p.inLoader(e.Regs[trace.RIP])
	case trace.KindRdrand:
		it.key = e.TrapName()
		it.result = fmt.Sprintf("%#x %d", e.Value, e.Aux)
	case trace.KindCpuid:
		it.key = e.TrapName()
		if e.Flags&trace.FlagXgetbv != 0 {
			it.args = []string{strconv.FormatUint(e.Regs[trace.RCX]&0xffffffff, 16)}
			it.result = fmt.Sprintf("%#x", e.Value)
			break
		}
		leaf := uint32(e.Regs[trace.RAX])
		it.args = []string{strconv.FormatUint(uint64(leaf), 16)}
		it.result = cpuidResult(leaf, e.Value, e.Aux)
	case trace.KindPreempt:
		it.key = "preempt"
		it.args = []string{info.PC}
	case trace.KindThreadExit:
		it.key = "thread exit"
	case trace.KindExit:
		it.key = "exit"
		it.result = info.Status
	case trace.KindEnd:
		it.key = "end"
	case trace.KindSharedMem:
		it.key = "shared " + info.Object
		for _, m := range e.Mem {
			it.out = append(it.out, m.Data...)
		}
	default:
		return it, false
	}
	return it, true
}

// syscallItem fills in a system call's item: the arguments that must
// agree (pointers and buffers are addresses: only what they hold counts),
// the result and the bytes written.
func (p *process) syscallItem(it *item, info *debugger.EventInfo, e, entry *trace.Event) {
	it.name, it.key = info.Name, info.Name
	it.result = info.Result
	if info.Errno != "" {
		it.result += " " + info.Errno
	}
	it.hash = e.Hash
	for _, m := range e.Mem {
		it.out = append(it.out, m.Data...)
	}
	switch {
	case statCalls[info.Name]:
		it.out = normalStat(it.out)
	case forkCalls[info.Name]:
		// What a child wrote into memory it shares with its parent (a
		// vfork child's stack) holds stack canaries and mangled pointers,
		// drawn from AT_RANDOM: only the result (its pid) is compared.
		it.out = nil
	}
	regs := e.Regs
	if entry != nil {
		regs = entry.Regs
	}
	c := syscalls.EventCall(e.Syscall, &regs, e.Flags&trace.FlagI386 != 0)
	c.Ret = int64(e.ExitRegs[trace.RAX])
	spec, known := syscalls.Lookup(c.Nr)
	for i, a := range info.Args {
		if known && i < len(spec.Args) {
			switch spec.Args[i].Type {
			case syscalls.Ptr, syscalls.Buf:
				continue
			case syscalls.Path:
				if it.path == "" {
					it.path = a
				}
			}
		}
		it.args = append(it.args, a)
	}
	// glibc's malloc keys its tcache with 8 bytes of getrandom(…,
	// GRND_NONBLOCK) at its first use: in every program, every run.
	if info.Name == "getrandom" && c.Args[1] == 8 && c.Args[2] == 1 && !p.tcacheKeyed {
		p.tcacheKeyed, it.tcacheKey = true, true
	}
	it.outerParent = info.Name == "getppid" && p.tp.Parent == 0
	if fd, ok := readFd(info.Name, c.Args[0]); ok {
		it.path = p.fds[fd]
	}
	p.trackFds(info.Name, it.path, c)
}

// readFd gives the descriptor a read-like call reads.
func readFd(name string, arg0 uint64) (int64, bool) {
	switch name {
	case "read", "pread64", "readv", "preadv", "preadv2", "recvfrom", "recvmsg":
		return int64(arg0), true
	}
	return 0, false
}

// trackFds follows which descriptor names which file: open calls add,
// close removes (dup and inheritance are left out: a read of a duplicate
// is then a data read, not a random one).
func (p *process) trackFds(name, path string, c syscalls.Call) {
	switch name {
	case "open", "openat", "openat2", "creat":
		if c.Ret >= 0 && path != "" {
			p.fds[c.Ret] = unquote(path)
		}
	case "close":
		delete(p.fds, int64(c.Args[0]))
	}
}

// unquote gives the path an argument shows in quotes.
func unquote(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return strings.Trim(s, `"`)
}

// loaderRanges are the executable regions of an exec's image that are not
// the program's: the dynamic loader's.
func loaderRanges(e *trace.Event) [][2]uint64 {
	im, err := trace.DecodeImage(e)
	if err != nil || im == nil {
		return nil
	}
	var out [][2]uint64
	for _, r := range im.Regions {
		if strings.Contains(r.Perms, "x") && strings.HasPrefix(r.Path, "/") && r.Path != im.Exe {
			out = append(out, [2]uint64{r.Start, r.Start + r.Size})
		}
	}
	return out
}

// inLoader says whether pc is in the dynamic loader's code.
func (p *process) inLoader(pc uint64) bool {
	for _, r := range p.loader {
		if pc >= r[0] && pc < r[1] {
			return true
		}
	}
	return false
}
