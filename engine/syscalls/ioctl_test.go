package syscalls

import "testing"

// TestIoctlOutputs checks the outputs of the virtual terminal, tty, socket
// and bridge requests that the _IOC encoding does not describe.
func TestIoctlOutputs(t *testing.T) {
	const base = 0x10000
	m := newMem(base, 0x1000)
	// SIOCGIFBR BRCTL_GET_BRIDGES: args {1, indices, 8} at base.
	m.put64(base, brctlGetBridges)
	m.put64(base+8, base+0x100)
	m.put64(base+16, 8)
	// A bridge's SIOCDEVPRIVATE: struct ifreq at base+0x200 whose ifr_data
	// (offset 16) points to args at base+0x300.
	m.put64(base+0x200+16, base+0x300)
	devArgs := func(cmd, ptr, num uint64) {
		m.put64(base+0x300, cmd)
		m.put64(base+0x308, ptr)
		m.put64(base+0x310, num)
	}
	// GIO_UNIMAP: struct unimapdesc {entry_ct = 3, entries = base+0x500} at base+0x400.
	m.put(base+0x400, []byte{3, 0})
	m.put64(base+0x408, base+0x500)
	// SIOCGHWTSTAMP: ifreq at base+0x600, ifr_data = base+0x700.
	m.put64(base+0x600+16, base+0x700)

	for _, tc := range []struct {
		name  string
		setup func()
		c     *Call
		want  []Range
	}{
		{"VT_GETSTATE", nil, call(t, "ioctl", 0, 5, 0x5603, base), []Range{{Addr: base, Len: 6}}},
		{"VT_GETMODE", nil, call(t, "ioctl", 0, 5, 0x5601, base), []Range{{Addr: base, Len: 8}}},
		{"KDGKBTYPE", nil, call(t, "ioctl", 0, 5, 0x4B33, base), []Range{{Addr: base, Len: 1}}},
		{"KDGKBMODE", nil, call(t, "ioctl", 0, 5, 0x4B44, base), []Range{{Addr: base, Len: 4}}},
		{"VT_GETSTATE on a pty", nil, call(t, "ioctl", -25, 5, 0x5603, base), nil},
		{"TIOCGWINSZ", nil, call(t, "ioctl", 0, 5, 0x5413, base), []Range{{Addr: base, Len: 8}}},
		{"TIOCGSERIAL", nil, call(t, "ioctl", 0, 5, 0x541E, base), []Range{{Addr: base, Len: 72}}},
		{"SIOCGIFINDEX", nil, call(t, "ioctl", 0, 6, 0x8933, base), []Range{{Addr: base, Len: 40}}},
		{"SIOCGIFMAP", nil, call(t, "ioctl", 0, 6, 0x8970, base), []Range{{Addr: base, Len: 40}}},
		{"SIOCGARP", nil, call(t, "ioctl", 0, 6, 0x8954, base), []Range{{Addr: base, Len: 68}}},
		{"TUNSETIFF", nil, call(t, "ioctl", 0, 3, 0x400454ca, base), []Range{{Addr: base, Len: 40}}},
		{"TUNGETIFF", nil, call(t, "ioctl", 0, 3, 0x800454d2, base), []Range{{Addr: base, Len: 40}}},
		{"GIO_UNIMAP", nil, call(t, "ioctl", 0, 5, 0x4B66, base+0x400), []Range{{Addr: base + 0x400, Len: 2}, {Addr: base + 0x500, Len: 12}}},
		{"SIOCGHWTSTAMP", nil, call(t, "ioctl", 0, 6, 0x89b1, base+0x600), []Range{{Addr: base + 0x700, Len: 12}}},
		{"SIOCGIFBR GET_BRIDGES", nil, call(t, "ioctl", 2, 6, 0x8940, base), []Range{{Addr: base + 0x100, Len: 8}}},
		{"SIOCGIFBR none", nil, call(t, "ioctl", 0, 6, 0x8940, base), nil},
		{"bridge info", func() { devArgs(brctlGetBridgeInfo, base+0x800, 0) },
			call(t, "ioctl", 0, 6, 0x89F0, base+0x200), []Range{{Addr: base + 0x800, Len: 72}}},
		{"bridge port list", func() { devArgs(brctlGetPortList, base+0x800, 4) },
			call(t, "ioctl", 0, 6, 0x89F0, base+0x200), []Range{{Addr: base + 0x800, Len: 16}}},
		{"bridge port list default", func() { devArgs(brctlGetPortList, base+0x800, 0) },
			call(t, "ioctl", 0, 6, 0x89F0, base+0x200), []Range{{Addr: base + 0x800, Len: 1024}}},
		{"bridge port info", func() { devArgs(brctlGetPortInfo, base+0x800, 1) },
			call(t, "ioctl", 0, 6, 0x89F0, base+0x200), []Range{{Addr: base + 0x800, Len: 48}}},
		{"bridge fdb", func() { devArgs(brctlGetFdbEntries, base+0x800, 10) },
			call(t, "ioctl", 3, 6, 0x89F0, base+0x200), []Range{{Addr: base + 0x800, Len: 48}}},
		{"private, not a bridge command", func() { devArgs(99, base+0x800, 10) },
			call(t, "ioctl", 0, 6, 0x89F0, base+0x200), nil},
	} {
		if tc.setup != nil {
			tc.setup()
		}
		checkRanges(t, "OutputRanges", OutputRanges, tc.name, tc.c, m, tc.want)
	}
}

// TestIoctlNames checks that listings name the requests.
func TestIoctlNames(t *testing.T) {
	for req, want := range map[uint64]string{0x5603: "VT_GETSTATE", 0x4B33: "KDGKBTYPE", 0x8912: "SIOCGIFCONF", 0x8940: "SIOCGIFBR", 0x5413: "TIOCGWINSZ"} {
		c := call(t, "ioctl", 0, 3, req, 0x1000)
		if got := FormatArgs(c, nil)[1]; got != want {
			t.Errorf("request %#x shown as %q, want %q", req, got, want)
		}
	}
}
