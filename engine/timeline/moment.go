package timeline

// Moments: a place in the recording (an event, a thread, the steps or
// watch hits after it), printed and parsed the same way everywhere, and
// portably (with the watched address and length) for other sessions.

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/rewind-debugger/rewind/engine/replay"
)

// Moment is a point of execution: the events before Event have been applied;
// PC is the anchor address (meaningful when Hits > 0 without Watch);
// then (when Hits > 0) the thread that runs towards event Event has arrived
// Hits times at PC — or, for a watch anchor, a write to watchpoint Watch has
// trapped Hits times — and then executed Steps more instructions. Moments
// are canonical: the same point has the same moment whichever route
// reached it, and going to a moment always gives the same registers and
// memory.
type Moment struct {
	Event int64  `json:"event"`
	Tid   int32  `json:"thread"`
	PC    uint64 `json:"pc"`
	Hits  int    `json:"hits"`
	// Watch, when set, makes Hits count traps of that watchpoint instead of
	// arrivals at PC.
	Watch *replay.Watchpoint `json:"watch,omitempty"`
	Steps int                `json:"steps"`
}

func (m Moment) String() string {
	s := fmt.Sprintf("#%d", m.Event)
	if m.Hits > 0 {
		if m.Watch != nil {
			s += fmt.Sprintf(" write %d to %#x", m.Hits, m.Watch.Addr)
		} else {
			s += fmt.Sprintf(" hit %d of %#x", m.Hits, m.PC)
		}
	}
	if m.Steps > 0 {
		s += fmt.Sprintf(" +%d", m.Steps)
	}
	return s
}

// momentRE matches the text of Moment.String for event and breakpoint
// anchors: "#N", "#N hit K of 0xPC", each with an optional " +S", and of
// Moment.Portable for watch anchors: "#N write K to 0xADDR/LEN".
var momentRE = regexp.MustCompile(`^#(\d+)(?: hit (\d+) of (0x[0-9a-f]+)| write (\d+) to (0x[0-9a-f]+)/([1248]))?(?: \+(\d+))?$`)

// Portable is the moment's text that ParseMoment reads in another
// session: String, with a watch anchor's length (a count of traps of a
// watchpoint depends on how many bytes it watches).
func (m Moment) Portable() string {
	if m.Watch == nil || m.Hits == 0 {
		return m.String()
	}
	s := fmt.Sprintf("#%d write %d to %#x/%d", m.Event, m.Hits, m.Watch.Addr, m.Watch.Len)
	if m.Steps > 0 {
		s += fmt.Sprintf(" +%d", m.Steps)
	}
	return s
}

// ParseMoment reads a moment written by Moment.String or Moment.Portable,
// so that a moment shown by one session can be reached in another. Watch
// anchors as String writes them ("write K to 0xADDR") do not say the
// watched length and cannot be parsed.
func (tl *Timeline) ParseMoment(s string) (Moment, bool) {
	m := momentRE.FindStringSubmatch(s)
	if m == nil {
		return Moment{}, false
	}
	var out Moment
	out.Event, _ = strconv.ParseInt(m[1], 10, 64)
	if m[2] != "" {
		out.Hits, _ = strconv.Atoi(m[2])
		out.PC, _ = strconv.ParseUint(m[3][2:], 16, 64)
	}
	if m[4] != "" {
		out.Hits, _ = strconv.Atoi(m[4])
		w := replay.Watchpoint{}
		w.Addr, _ = strconv.ParseUint(m[5][2:], 16, 64)
		w.Len, _ = strconv.Atoi(m[6])
		out.Watch = &w
	}
	if m[7] != "" {
		out.Steps, _ = strconv.Atoi(m[7])
	}
	if out.Event > tl.index.Total() {
		return Moment{}, false
	}
	out.Tid = tl.index.TidAt(out.Event)
	return out, true
}
