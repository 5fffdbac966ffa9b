package gdbserver

import (
	"fmt"
	"strings"
)

// features is the qSupported reply: what gdb may ask of the server.
var features = strings.Join([]string{
	fmt.Sprintf("PacketSize=%x", MaxPacket),
	"QStartNoAckMode+",
	"qXfer:features:read+",
	"qXfer:auxv:read+",
	"qXfer:libraries-svr4:read+",
	"qXfer:exec-file:read+",
	"qXfer:threads:read+",
	"ReverseStep+",
	"ReverseContinue+",
	"swbreak+",
	"hwbreak+",
}, ";")

// query answers the q packets (p without its 'q').
func (sv *Server) query(p string) string {
	name, args, _ := strings.Cut(p, ":")
	switch name {
	case "Supported":
		return features
	case "C":
		return fmt.Sprintf("QC%x", sv.currentThread())
	case "Attached":
		// gdb detaches from an attached process when it quits, instead
		// of killing it: there is nothing to kill in a recording.
		return "1"
	case "fThreadInfo":
		var ids []string
		for _, t := range sv.s.Timeline().Session().Threads() {
			ids = append(ids, fmt.Sprintf("%x", t.Tid))
		}
		return "m" + strings.Join(ids, ",")
	case "sThreadInfo":
		return "l"
	case "Symbol":
		return "OK" // no symbols needed
	case "Xfer":
		return sv.xfer(args)
	}
	if rest, ok := strings.CutPrefix(p, "ThreadExtraInfo,"); ok {
		if tid, ok := parseThread(rest); ok {
			return fmt.Sprintf("%x", sv.s.ThreadName(tid))
		}
		return "E01"
	}
	return ""
}

// xfer answers qXfer:OBJECT:read:ANNEX:OFFSET,LENGTH with the part of the
// object asked for: 'm' when more follows, 'l' for the last part.
func (sv *Server) xfer(args string) string {
	parts := strings.SplitN(args, ":", 4)
	if len(parts) != 4 || parts[1] != "read" {
		return ""
	}
	object, annex := parts[0], parts[2]
	off, n, ok := parseAddrLen(parts[3])
	if !ok {
		return "E01"
	}
	key := object + ":" + annex
	if off > 0 && sv.xferKey == key {
		// The rest of an object gdb reads in parts: the parts must be
		// of one copy, and building it (threads' names, the link map)
		// costs reads of the replaying process.
		return xferPart(sv.xferData, off, n)
	}
	var data []byte
	var err error
	switch object {
	case "features":
		if annex != "target.xml" {
			return "E00"
		}
		data = []byte(targetXML(sv.avx))
	case "auxv":
		data, err = sv.auxv()
	case "libraries-svr4":
		data, err = sv.librariesSVR4()
	case "exec-file":
		data, err = sv.execFile()
	case "threads":
		data = sv.threadsXML()
	default:
		return ""
	}
	if err != nil {
		sv.logf("qXfer:%s: %v", object, err)
		return "E01"
	}
	sv.xferKey, sv.xferData = key, data
	return xferPart(data, off, n)
}

// xferPart is the reply to a qXfer read of n bytes at off of data.
func xferPart(data []byte, off, n uint64) string {
	if off >= uint64(len(data)) {
		return "l"
	}
	// Escapes can double the size of a reply: keep it within a packet.
	end := off + min(n, MaxPacket/2-1)
	if end >= uint64(len(data)) {
		return "l" + string(data[off:])
	}
	return "m" + string(data[off:end])
}

// currentThread is the thread the replay stands at (the stop's, else the
// one that runs next), as gdb's current thread.
func (sv *Server) currentThread() int32 {
	tl := sv.s.Timeline()
	threads := tl.Session().Threads()
	for _, want := range []int32{tl.Now().Tid, tl.Session().NextThread()} {
		for _, t := range threads {
			if t.Tid == want {
				return want
			}
		}
	}
	if len(threads) > 0 {
		return threads[0].Tid
	}
	return tl.Now().Tid
}

// threadAlive says whether the replay has thread tid now.
func (sv *Server) threadAlive(tid int32) bool {
	if tid <= 0 {
		return true
	}
	for _, t := range sv.s.Timeline().Session().Threads() {
		if t.Tid == tid {
			return true
		}
	}
	return false
}

// realTid is the replaying process's thread that plays recorded thread tid.
func (sv *Server) realTid(tid int32) (int, bool) {
	for _, t := range sv.s.Timeline().Session().Threads() {
		if t.Tid == tid {
			return t.Real, true
		}
	}
	return 0, false
}

// threadsXML is qXfer:threads:read: every thread with its name (the
// replaying thread's, which the program's prctl(PR_SET_NAME) set there too).
func (sv *Server) threadsXML() []byte {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?>\n<threads>\n")
	for _, t := range sv.s.Timeline().Session().Threads() {
		fmt.Fprintf(&b, "<thread id=\"%x\" name=\"%s\"/>\n", t.Tid, xmlEscape(sv.s.ThreadName(t.Tid)))
	}
	b.WriteString("</threads>\n")
	return []byte(b.String())
}

// xmlEscape makes s safe in an XML attribute.
func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
