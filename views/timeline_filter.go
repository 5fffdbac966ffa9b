package views

// The Timeline's filter language: terms that name event kinds, system
// calls, threads and text, and the folding of the noise before main.

import (
	"slices"
	"strconv"
	"strings"

	"github.com/rewind-debugger/rewind/debugger"
)

// tlFilter is a parsed filter, and the folding.
type tlFilter struct {
	kinds map[string]bool
	tids  map[int32]bool
	pids  map[int32]bool
	sys   []string // system call names
	fns   []string // functions, lower case, matched in part
	texts []string // lower case
	// before hides the events before it (the loader's), noNoise the
	// rdtsc/cpuid ones: folding.
	before  int64
	noNoise bool
}

// tlNoise says whether events of a kind are folded anywhere: a program's
// clocks, CPU queries and random numbers, which drown what a user looks for.
func tlNoise(kind string) bool {
	return kind == "rdtsc" || kind == "cpuid" || kind == "rdrand" || kind == "rdseed"
}

// tlParseFilter parses "syscall,tid:4242,write"; nil for an empty filter.
func tlParseFilter(s string) *tlFilter {
	f := &tlFilter{kinds: map[string]bool{}, tids: map[int32]bool{}, pids: map[int32]bool{}}
	empty := true
	for _, term := range strings.Split(s, ",") {
		term = strings.TrimSpace(term)
		low := strings.ToLower(term)
		switch {
		case term == "":
			continue
		case tlKinds[low] || (strings.HasSuffix(low, "s") && tlKinds[strings.TrimSuffix(low, "s")]):
			if !tlKinds[low] {
				low = strings.TrimSuffix(low, "s")
			}
			f.kinds[low] = true
		case strings.HasPrefix(low, "tid:") || strings.HasPrefix(low, "pid:"):
			n, err := strconv.ParseInt(strings.TrimSpace(term[4:]), 10, 32)
			switch {
			case err != nil:
				f.texts = append(f.texts, low)
			case low[0] == 't':
				f.tids[int32(n)] = true
			default:
				f.pids[int32(n)] = true
			}
		case strings.HasPrefix(low, "sys:"):
			f.sys = append(f.sys, strings.TrimSpace(low[4:]))
		case strings.HasPrefix(low, "fn:"):
			f.fns = append(f.fns, strings.TrimSpace(low[3:]))
		case strings.HasPrefix(low, "text:"):
			f.texts = append(f.texts, low[5:])
		default:
			f.texts = append(f.texts, low)
		}
		empty = false
	}
	if empty {
		return nil
	}
	return f
}

// match says whether an event passes the filter.
func (f *tlFilter) match(it *EventItem) bool {
	if it.N < f.before || (f.noNoise && tlNoise(it.Kind) && !f.kinds[it.Kind]) {
		return false
	}
	if len(f.kinds) > 0 && !f.kinds[it.Kind] {
		return false
	}
	if len(f.tids) > 0 && !f.tids[it.Tid] {
		return false
	}
	if len(f.pids) > 0 && !f.pids[it.Pid] {
		return false
	}
	if len(f.sys) > 0 && !slices.ContainsFunc(f.sys, func(name string) bool {
		return it.Kind == "syscall" && strings.HasPrefix(strings.TrimPrefix(it.Text, "<... resumed> "), name+"(")
	}) {
		return false
	}
	if len(f.fns) > 0 && !slices.ContainsFunc(f.fns, func(fn string) bool {
		return it.Function != "" && strings.Contains(strings.ToLower(it.Function), fn)
	}) {
		return false
	}
	if len(f.texts) == 0 {
		return true
	}
	low := strings.ToLower(it.Text)
	for _, s := range f.texts {
		if strings.Contains(low, s) {
			return true
		}
	}
	return false
}

// tlKinds are the kinds a filter term names (plurals too): the event types.
var tlKinds = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range debugger.Types {
		m[k] = true
	}
	return m
}()
