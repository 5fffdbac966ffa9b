package record

// Daemons. A program that starts a daemon (fork, setsid, fork again, the
// parent and the intermediate exit) returns at once when run natively: its
// shell does not wait for the daemon, which runs on. A recording that
// waited for every process of the tree would wait for the daemon, forever
// for a real one. So once the recorded program's first process has ended
// and every process left is a daemon (it left the program's session with
// setsid, or its parent is gone: it was re-parented), the recording ends
// there: the trace ends with a KindEnd event saying so (replay stops
// there, the daemons running), and the daemons are detached as `record -p`
// detaches from the processes it attached to (detach.go), with what the
// recording changed in them put back (attach.Changes): they run on
// unrecorded.

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/attach"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// procStat is what /proc/PID/stat says of a process's place in the tree.
type procStat struct {
	state     byte // R, S, D, Z...
	ppid, sid int
}

// readProcStat reads the parent and the session of process pid.
func readProcStat(pid int) (procStat, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	// The name may hold spaces and parentheses: the fields follow the
	// last ')'. After it: state ppid pgrp session.
	i := bytes.LastIndexByte(data, ')')
	f := strings.Fields(string(data[i+1:]))
	if i < 0 || len(f) < 4 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: unexpected %q", pid, data)
	}
	ppid, err1 := strconv.Atoi(f[1])
	sid, err2 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil {
		return procStat{}, fmt.Errorf("/proc/%d/stat: unexpected %q", pid, data)
	}
	return procStat{state: f[0][0], ppid: ppid, sid: sid}, nil
}

// daemon says why a process left is a daemon.
type daemon struct {
	pid int
	why string
}

// daemons returns the processes left, each with why it is a daemon, if
// the first process has ended and all of them are; nil otherwise, with
// why not in words once the first process has ended. unsure says the
// answer may change with no event to tell: a process is gone from /proc,
// or a parent still counted is dead, its death not yet handled (the
// process blocked in a call, nothing else would bring the question back).
func (r *Recorder) daemons() (out []daemon, unsure bool, whyNot string) {
	if !r.rootDone || r.att != nil || len(r.procs) == 0 || !r.rootSidKnown {
		return nil, false, ""
	}
	for pid := range r.procs {
		st, err := readProcStat(pid)
		switch {
		case err != nil:
			// Ending: its death comes next.
			return nil, true, fmt.Sprintf("process %d is ending (%v)", pid, err)
		case st.state == 'Z' || st.state == 'X':
			return nil, true, fmt.Sprintf("process %d is ending (state %c)", pid, st.state)
		case st.sid != r.rootSid:
			out = append(out, daemon{pid, "left the session"})
		case r.procs[st.ppid] == nil:
			out = append(out, daemon{pid, "outlived its parent"})
		default:
			// Its parent, recorded, may still wait for it.
			pst, err := readProcStat(st.ppid)
			if err != nil || pst.state == 'Z' || pst.state == 'X' {
				return nil, true, fmt.Sprintf("process %d's parent %d is ending", pid, st.ppid)
			}
			return nil, false, fmt.Sprintf("process %d is in the program's session and its parent %d, recorded, runs", pid, st.ppid)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pid < out[j].pid })
	return out, false, ""
}

// daemonRecheck bounds how long an unsure answer of daemons waits to be
// asked again.
const daemonRecheck = 50 * time.Millisecond

// checkDaemons asks whether only daemons are left, now or, when the answer
// is not sure yet, again after daemonRecheck (wakeAt wakes the loop then).
func (r *Recorder) checkDaemons(now time.Time) []daemon {
	r.daemonCheck, r.daemonRetry = false, time.Time{}
	ds, unsure, _ := r.daemons()
	if unsure {
		r.daemonRetry = now.Add(daemonRecheck)
	}
	return ds
}

// releaseDaemons ends the recording with the daemons ds, the only
// processes left: the end event, then the daemons go on unrecorded.
func (r *Recorder) releaseDaemons(ds []daemon) error {
	r.settleCurrent()
	tid := ds[0].pid
	if t := r.someCurrent(); t != nil {
		tid = t.tid
	}
	var names []string
	for _, d := range ds {
		names = append(names, fmt.Sprintf("%d (%s)", d.pid, d.why))
	}
	reason := "daemons detached: " + strings.Join(names, ", ")
	if err := r.log(&trace.Event{Kind: trace.KindEnd, Tid: int32(tid), Data: []byte(reason)}); err != nil {
		return err
	}
	r.done = true
	err := r.detach()
	for _, d := range ds {
		under := ""
		if r.shepherd != 0 {
			under = fmt.Sprintf(" under shepherd %d (a tracer the recorder's seccomp filter needs)", r.shepherd)
		}
		fmt.Fprintf(r.opts.Warn, "rewind: process %d %s (a daemon); detached, it runs on unrecorded%s\n", d.pid, d.why, under)
	}
	if err != nil {
		return fmt.Errorf("daemons: %w", err)
	}
	return nil
}

// launchChanges are what a recording that launched the program changed in
// its processes, for a detach: every thread had rdtsc (and cpuid, with
// CPUID faulting) trapped, ADDR_NO_RANDOMIZE added to rewind's own
// personality, and the recording's CPU instead of rewind's CPU set. Its
// rseq area was refused, never registered: there is none to give back.
func (r *Recorder) launchChanges() attach.Changes {
	c := attach.Changes{Threads: map[int]attach.ThreadSettings{}, CPUID: r.cpuidFaulting}
	if p, _, errno := unix.Syscall(unix.SYS_PERSONALITY, 0xffffffff, 0, 0); errno == 0 {
		c.Personality = uint64(p)
	}
	var set unix.CPUSet
	haveSet := unix.SchedGetaffinity(0, &set) == nil && set.Count() > 0
	for tid, t := range r.threads {
		s := attach.ThreadSettings{Personality: true, Trapped: true, TSCSigsegv: t.tscSigsegv}
		if haveSet {
			s.Affinity = &set
		}
		c.Threads[tid] = s
	}
	return c
}

// noteSession notes the session of the first process, which daemons leave.
func (r *Recorder) noteSession() {
	if st, err := readProcStat(r.pid); err == nil {
		r.rootSid, r.rootSidKnown = st.sid, true
	}
}

// daemonSyscall notes a call that may make a daemon of its process (a
// setsid): once the first process has ended, the run loop asks whether
// only daemons are left.
func (r *Recorder) daemonSyscall(nr int) {
	if nr == unix.SYS_SETSID {
		r.daemonCheck = true
	}
}
