package syscalls

import (
	"encoding/binary"
	"fmt"
	"math"
)

// rangesFn is the type of Spec.Outputs and Spec.Inputs.
type rangesFn = func(c *Call, m Memory) ([]Range, error)

// part is one piece of a call's outputs or inputs; specs combine parts with
// outs, outsIntr and ins instead of each call having its own function.
type part func(c *Call, m Memory) ([]Range, error)

// Kernel-internal restart codes. A ptrace exit stop can show them in rax
// when a signal interrupted the call; user code only ever sees EINTR or a
// restarted call.
const (
	errRestartSys      = 512 // ERESTARTSYS
	errRestartNoIntr   = 513 // ERESTARTNOINTR
	errRestartNoHand   = 514 // ERESTARTNOHAND
	errNoIoctlCmd      = 515 // ENOIOCTLCMD
	errRestartBlock    = 516 // ERESTART_RESTARTBLOCK
	errEINTR           = 4
	errEINVAL          = 22
	errEFAULT          = 14
	errEOVERFLOW       = 75
	errENOSYS          = 38
	maxSockaddr        = 128  // sizeof(struct sockaddr_storage)
	maxPath            = 4096 // PATH_MAX
	maxInputPrefix     = 32   // bytes of write-like buffers kept for display
	futexCmdMask       = 0x7f
	futexPrivate       = 128
	futexClockRealtime = 256
)

// interrupted reports whether ret says a signal cut the call short; some
// calls (sleeps, select, poll) still write their remaining time or results.
func interrupted(ret int64) bool {
	switch -ret {
	case errEINTR, errRestartSys, errRestartNoIntr, errRestartNoHand, errRestartBlock:
		return true
	}
	return false
}

func collect(c *Call, m Memory, ps []part) ([]Range, error) {
	var rs []Range
	for _, p := range ps {
		r, err := p(c, m)
		rs = append(rs, r...)
		if err != nil {
			return rs, err
		}
	}
	return rs, nil
}

// outs is the common case: a failed call wrote nothing.
func outs(ps ...part) rangesFn {
	return func(c *Call, m Memory) ([]Range, error) {
		if c.Ret < 0 {
			return nil, nil
		}
		return collect(c, m, ps)
	}
}

// outsIntr is for calls that write back even when a signal interrupted them
// (remaining sleep time, poll revents); wrap success-only parts in onSuccess.
func outsIntr(ps ...part) rangesFn {
	return func(c *Call, m Memory) ([]Range, error) {
		if c.Ret < 0 && !interrupted(c.Ret) {
			return nil, nil
		}
		return collect(c, m, ps)
	}
}

// ins lists entry-time captures; they do not depend on the result.
func ins(ps ...part) rangesFn {
	return func(c *Call, m Memory) ([]Range, error) { return collect(c, m, ps) }
}

func onSuccess(ps ...part) part {
	return func(c *Call, m Memory) ([]Range, error) {
		if c.Ret < 0 {
			return nil, nil
		}
		return collect(c, m, ps)
	}
}

func when(cond func(c *Call) bool, ps ...part) part {
	return func(c *Call, m Memory) ([]Range, error) {
		if !cond(c) {
			return nil, nil
		}
		return collect(c, m, ps)
	}
}

// span is n bytes at addr. It is never cut short: the recorder reads what
// is mapped and refuses, in words, a call that wrote more than one event can
// hold (record.MaxEventMem); a silently shortened range was how large reads
// once lost their bytes.
func span(addr uint64, n uint64) []Range {
	if addr == 0 || n == 0 {
		return nil
	}
	return []Range{{Addr: addr, Len: int(min(n, math.MaxInt))}}
}

// fixed: a struct of n bytes at argument i, skipped when the pointer is NULL.
func fixed(i, n int) part {
	return func(c *Call, _ Memory) ([]Range, error) { return span(c.Args[i], uint64(n)), nil }
}

// retBytes: the result counts the bytes written at argument i, never more
// than the capacity in argument capIdx (recvfrom with MSG_TRUNC returns the
// full datagram length).
func retBytes(i, capIdx int) part {
	return func(c *Call, _ Memory) ([]Range, error) {
		if c.Ret <= 0 {
			return nil, nil
		}
		return span(c.Args[i], min(uint64(c.Ret), c.Args[capIdx])), nil
	}
}

// retTimes: the result counts elements of size bytes at argument i
// (epoll_event, gid_t).
func retTimes(i, size int) part {
	return func(c *Call, _ Memory) ([]Range, error) {
		if c.Ret <= 0 {
			return nil, nil
		}
		return span(c.Args[i], uint64(c.Ret)*uint64(size)), nil
	}
}

// argTimes: argument n counts elements of size bytes at argument i (pollfd
// arrays, sigset sizes).
func argTimes(i, n, size int) part {
	return func(c *Call, _ Memory) ([]Range, error) {
		return span(c.Args[i], c.Args[n]*uint64(size)), nil
	}
}

// retPlus: a header of hdr bytes then the ret bytes of payload (msgrcv's mtype).
func retPlus(i, hdr int) part {
	return func(c *Call, _ Memory) ([]Range, error) {
		if c.Ret < 0 {
			return nil, nil
		}
		return span(c.Args[i], uint64(hdr)+uint64(c.Ret)), nil
	}
}

// fdsets: select's bitmaps are read and rewritten in whole longs up to nfds.
func fdsets(idx ...int) part {
	return func(c *Call, _ Memory) ([]Range, error) {
		nfds := int32(c.Args[0])
		if nfds <= 0 {
			return nil, nil
		}
		n := uint64(nfds+63) / 64 * 8
		var rs []Range
		for _, i := range idx {
			rs = append(rs, span(c.Args[i], n)...)
		}
		return rs, nil
	}
}

// sockOut: the kernel stores the full address length in *addrlen and copies
// at most the caller's buffer; the replayer gets the length word and the
// address bytes (bounded by sockaddr_storage).
func sockOut(addr, lenp int) part { return lenOut(addr, lenp, maxSockaddr) }

// optOut: getsockopt writes *optlen bytes of value and the new length.
func optOut(val, lenp int) part { return lenOut(val, lenp, ^uint64(0)) }

// lenOut is a buffer whose length the kernel writes in a 32-bit word:
// that word, and as many bytes of the buffer (at most limit).
func lenOut(buf, lenp int, limit uint64) part {
	return func(c *Call, m Memory) ([]Range, error) {
		lp := c.Args[lenp]
		if lp == 0 {
			return nil, nil
		}
		n, err := u32(m, lp)
		if err != nil {
			return nil, err
		}
		return append([]Range{{Addr: lp, Len: 4}}, span(c.Args[buf], min(uint64(n), limit))...), nil
	}
}

// scatter: ret bytes spread over the iovec array at argument iov with
// argument cnt entries (readv, preadv, process_vm_readv).
func scatter(iov, cnt int) part {
	return func(c *Call, m Memory) ([]Range, error) {
		if c.Ret <= 0 {
			return nil, nil
		}
		return iovRanges(m, c.Args[iov], c.Args[cnt], uint64(c.Ret))
	}
}

func iovRanges(m Memory, iov, cnt, total uint64) ([]Range, error) {
	var rs []Range
	for i := uint64(0); i < cnt && i < 1024 && total > 0; i++ {
		b, err := readFull(m, iov+16*i, 16)
		if err != nil {
			return rs, err
		}
		base, n := le64(b), min(le64(b[8:]), total)
		rs = append(rs, span(base, n)...)
		total -= n
	}
	return rs, nil
}

// msghdrOut: the whole header (msg_namelen, msg_controllen and msg_flags are
// rewritten), the peer address, the control data and the payload.
func msghdrOut(m Memory, hdr uint64, hdrLen int, total uint64) ([]Range, error) {
	b, err := readFull(m, hdr, 56)
	if err != nil {
		return nil, err
	}
	rs := []Range{{Addr: hdr, Len: hdrLen}}
	rs = append(rs, span(le64(b), min(uint64(le32(b[8:])), maxSockaddr))...)
	io, err := iovRanges(m, le64(b[16:]), le64(b[24:]), total)
	rs = append(rs, io...)
	if err != nil {
		return rs, err
	}
	return append(rs, span(le64(b[32:]), le64(b[40:]))...), nil
}

func recvmsgOut(c *Call, m Memory) ([]Range, error) {
	return msghdrOut(m, c.Args[1], 56, uint64(c.Ret))
}

// mmsgOut: each of the ret struct mmsghdr (64 bytes: msghdr then msg_len)
// got its msg_len; received ones also got everything recvmsg writes.
func mmsgOut(recv bool) part {
	return func(c *Call, m Memory) ([]Range, error) {
		var rs []Range
		for i := uint64(0); i < uint64(max(c.Ret, 0)); i++ {
			h := c.Args[1] + 64*i
			if !recv {
				rs = append(rs, Range{Addr: h + 56, Len: 4})
				continue
			}
			n, err := u32(m, h+56)
			if err != nil {
				return rs, err
			}
			r, err := msghdrOut(m, h, 60, uint64(n))
			rs = append(rs, r...)
			if err != nil {
				return rs, err
			}
		}
		return rs, nil
	}
}

// pages: mincore writes one byte per page of the range.
func pages(length, vec int) part {
	return func(c *Call, _ Memory) ([]Range, error) {
		return span(c.Args[vec], (c.Args[length]+4095)/4096), nil
	}
}

// argSize: a buffer whose size the caller passes in argument n
// (rt_sigpending's sigsetsize, sched_getattr's size).
func argSize(i, n int) part {
	return func(c *Call, _ Memory) ([]Range, error) { return span(c.Args[i], c.Args[n]), nil }
}

func u32(m Memory, addr uint64) (uint32, error) {
	b, err := readFull(m, addr, 4)
	if err != nil {
		return 0, err
	}
	return le32(b), nil
}

func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

func readFull(m Memory, addr uint64, n int) ([]byte, error) {
	if m == nil {
		return nil, fmt.Errorf("syscalls: no memory to read %d bytes at %#x", n, addr)
	}
	b := make([]byte, n)
	k, err := m.ReadAt(b, addr)
	if k == n {
		return b, nil
	}
	if err == nil {
		err = fmt.Errorf("short read of %d bytes at %#x", n, addr)
	}
	return nil, fmt.Errorf("syscalls: reading %d bytes at %#x: %w", n, addr, err)
}

// Entry-time captures.

func path(i int) part {
	return func(c *Call, _ Memory) ([]Range, error) {
		if c.Args[i] == 0 {
			return nil, nil
		}
		return []Range{{Addr: c.Args[i], Len: maxPath, CString: true}}, nil
	}
}

// sockIn: the address a connect, bind or sendto passes, addrlen in argument n.
func sockIn(i, n int) part {
	return func(c *Call, _ Memory) ([]Range, error) {
		return span(c.Args[i], min(uint64(uint32(c.Args[n])), maxSockaddr)), nil
	}
}

// bufIn: the first bytes a write-like call sends, enough to show and check.
func bufIn(i, n int) part {
	return func(c *Call, _ Memory) ([]Range, error) {
		return span(c.Args[i], min(c.Args[n], maxInputPrefix)), nil
	}
}

// iovIn: the first bytes of the first iovec of writev and friends.
func iovIn(iov, cnt int) part {
	return func(c *Call, m Memory) ([]Range, error) {
		if c.Args[cnt] == 0 || c.Args[iov] == 0 {
			return nil, nil
		}
		b, err := readFull(m, c.Args[iov], 16)
		if err != nil {
			return nil, err
		}
		return span(le64(b), min(le64(b[8:]), maxInputPrefix)), nil
	}
}

// Netfilter table replacements (iptables, ip6tables, arptables, ebtables):
// a setsockopt whose struct points to an array the kernel fills with the
// old table's counters. Each entry is the option, its level, where the
// struct holds num_counters and the counters pointer.
var xtReplace = []struct {
	level, opt        uint64
	numOff, countsOff int
}{
	{0, 64, 84, 88},   // IPT_SO_SET_REPLACE: struct ipt_replace
	{41, 64, 84, 88},  // IP6T_SO_SET_REPLACE: struct ip6t_replace
	{0, 96, 68, 72},   // ARPT_SO_SET_REPLACE: struct arpt_replace
	{0, 128, 96, 104}, // EBT_SO_SET_ENTRIES: struct ebt_replace
}

// xtCountersSize is sizeof(struct xt_counters): packets and bytes.
const xtCountersSize = 16

// replaceCounters: the old counters a netfilter table replacement writes.
func replaceCounters(level, opt, val int) part {
	return func(c *Call, m Memory) ([]Range, error) {
		for _, x := range xtReplace {
			if uint64(uint32(c.Args[level])) != x.level || uint64(uint32(c.Args[opt])) != x.opt {
				continue
			}
			b, err := readFull(m, c.Args[val], x.countsOff+8)
			if err != nil {
				return nil, err
			}
			n := uint64(le32(b[x.numOff:]))
			return span(le64(b[x.countsOff:]), n*xtCountersSize), nil
		}
		return nil, nil
	}
}
