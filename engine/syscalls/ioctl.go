package syscalls

// ioctl requests whose outputs the _IOC encoding does not give: the
// virtual terminal and keyboard queries (their numbers predate _IOC), more
// tty and socket queries, and the bridge calls that pass an array of
// arguments. Replay emulates ioctl, so each output not listed here would
// be left as it was in the replaying process.

// ioctlFixed gives the size of the structure the kernel writes at the
// argument of a successful request.
var ioctlFixed = map[uint32]uint64{
	// Virtual terminals (linux/vt.h).
	0x5600: 4,  // VT_OPENQRY: int
	0x5601: 8,  // VT_GETMODE: struct vt_mode
	0x5603: 6,  // VT_GETSTATE: struct vt_stat
	0x560D: 2,  // VT_GETHIFONTMASK: unsigned short
	0x560E: 28, // VT_WAITEVENT: struct vt_event
	// Console and keyboard (linux/kd.h).
	0x4B31: 1,    // KDGETLED: char
	0x4B33: 1,    // KDGKBTYPE: char
	0x4B3B: 4,    // KDGETMODE: int
	0x4B40: 256,  // GIO_SCRNMAP
	0x4B44: 4,    // KDGKBMODE: int
	0x4B46: 4,    // KDGKBENT: struct kbentry
	0x4B48: 513,  // KDGKBSENT: struct kbsentry
	0x4B4A: 772,  // KDGKBDIACR: struct kbdiacrs
	0x4B4C: 8,    // KDGETKEYCODE: struct kbkeycode
	0x4B60: 8192, // GIO_FONT
	0x4B62: 4,    // KDGKBMETA: int
	0x4B64: 1,    // KDGKBLED: char
	0x4B69: 512,  // GIO_UNISCRNMAP
	0x4B70: 48,   // GIO_CMAP
	0x4BFA: 3076, // KDGKBDIACRUC: struct kbdiacrsuc
	// Serial lines and files.
	0x541E: 72, // TIOCGSERIAL: struct serial_struct
	0x542E: 32, // TIOCGRS485: struct serial_rs485
	0x545D: 80, // TIOCGICOUNT: struct serial_icounter_struct
	0x5460: 8,  // FIOQSIZE: loff_t
	0x0001: 4,  // FIBMAP: int
	0x0002: 4,  // FIGETBSZ: int
	// Sockets and interfaces (struct ifreq is 40 bytes).
	0x8904: 4,  // SIOCGPGRP: int
	0x891f: 40, // SIOCGIFMEM
	0x8925: 40, // SIOCGIFENCAP
	0x8935: 40, // SIOCGIFPFLAGS
	0x8938: 40, // SIOCGIFCOUNT
	0x8947: 40, // SIOCGMIIPHY
	0x8948: 40, // SIOCGMIIREG
	0x894B: 4,  // SIOCOUTQNSD: int
	0x8954: 68, // SIOCGARP: struct arpreq
	0x8961: 68, // SIOCGRARP: struct arpreq
	0x8970: 40, // SIOCGIFMAP
	0x8982: 56, // SIOCGIFVLAN: struct vlan_ioctl_args
	// TUN/TAP (linux/if_tun.h): declared _IOW/_IOR(int), they copy a
	// whole struct ifreq back (the name the kernel chose for "tun%d").
	0x400454ca: 40, // TUNSETIFF
	0x800454d2: 40, // TUNGETIFF
}

// Bridge requests (linux/if_bridge.h, net/bridge/br_ioctl.c).
const (
	siocGIFBR     = 0x8940 // SIOCGIFBR: unsigned long args[3] at the argument
	siocSIFBR     = 0x8941 // SIOCSIFBR: the same deviceless commands
	siocGHWTSTAMP = 0x89b1 // ifreq whose ifr_data points to a struct hwtstamp_config
	siocDevPriv   = 0x89F0 // SIOCDEVPRIVATE: a bridge's ifr_data points to unsigned long args[4]

	brctlGetBridges    = 1
	brctlGetBridgeInfo = 6
	brctlGetPortList   = 7
	brctlGetFdbEntries = 8
	brctlGetPortInfo   = 12

	sizeBridgeInfo = 72 // struct __bridge_info
	sizePortInfo   = 48 // struct __port_info
	sizeFdbEntry   = 16 // struct __fdb_entry
	brMaxPorts     = 1024
	ifrDataOffset  = 16 // ifr_data in struct ifreq
)

// ioctlMore returns the outputs of the requests this file knows, and
// whether it knows the request.
func ioctlMore(c *Call, m Memory) ([]Range, bool, error) {
	req, arg := uint32(c.Args[1]), c.Args[2]
	if n, ok := ioctlFixed[req]; ok {
		return span(arg, n), true, nil
	}
	switch req {
	case 0x4B66: // GIO_UNIMAP: struct unimapdesc {u16 entry_ct; struct unipair *entries}
		b, err := readFull(m, arg, 16)
		if err != nil {
			return nil, true, err
		}
		return append(span(arg, 2), span(le64(b[8:]), 4*uint64(le16(b)))...), true, nil
	case siocGHWTSTAMP:
		b, err := readFull(m, arg+ifrDataOffset, 8)
		if err != nil {
			return nil, true, err
		}
		return span(le64(b), 12), true, nil
	case siocGIFBR, siocSIFBR:
		rs, err := bridgeOut(c, m, arg, false)
		return rs, true, err
	case siocDevPriv:
		b, err := readFull(m, arg+ifrDataOffset, 8)
		if err != nil {
			return nil, true, err
		}
		rs, err := bridgeOut(c, m, le64(b), true)
		return rs, true, err
	}
	return nil, false, nil
}

// bridgeOut: the bridge commands take an array of unsigned longs, the
// command first and a user pointer second; what they write there depends
// on the command and, for lists, on the count returned. A device's private
// ioctl only means a bridge command on a bridge: the others are left to
// the _IOC rules (none apply to SIOCDEVPRIVATE).
func bridgeOut(c *Call, m Memory, argv uint64, device bool) ([]Range, error) {
	b, err := readFull(m, argv, 24)
	if err != nil {
		return nil, err
	}
	cmd, ptr, num := le64(b), le64(b[8:]), le64(b[16:])
	if !device {
		if cmd == brctlGetBridges {
			return span(ptr, 4*uint64(c.Ret)), nil
		}
		return nil, nil
	}
	switch cmd {
	case brctlGetBridgeInfo:
		return span(ptr, sizeBridgeInfo), nil
	case brctlGetPortList:
		if num == 0 {
			num = 256
		}
		return span(ptr, 4*min(num, brMaxPorts)), nil
	case brctlGetFdbEntries:
		return span(ptr, sizeFdbEntry*uint64(c.Ret)), nil
	case brctlGetPortInfo:
		return span(ptr, sizePortInfo), nil
	}
	return nil, nil
}

func le16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }

// ioctlNames names the requests above in listings.
var ioctlNames = map[uint64]string{
	0x5600: "VT_OPENQRY", 0x5601: "VT_GETMODE", 0x5602: "VT_SETMODE", 0x5603: "VT_GETSTATE",
	0x5606: "VT_ACTIVATE", 0x5607: "VT_WAITACTIVE", 0x560D: "VT_GETHIFONTMASK",
	0x560E: "VT_WAITEVENT",
	0x4B31: "KDGETLED", 0x4B32: "KDSETLED", 0x4B33: "KDGKBTYPE", 0x4B3A: "KDSETMODE",
	0x4B3B: "KDGETMODE", 0x4B40: "GIO_SCRNMAP", 0x4B44: "KDGKBMODE", 0x4B45: "KDSKBMODE",
	0x4B46: "KDGKBENT", 0x4B48: "KDGKBSENT", 0x4B4A: "KDGKBDIACR", 0x4B4C: "KDGETKEYCODE",
	0x4B60: "GIO_FONT", 0x4B62: "KDGKBMETA", 0x4B64: "KDGKBLED", 0x4B66: "GIO_UNIMAP",
	0x4B69: "GIO_UNISCRNMAP", 0x4B70: "GIO_CMAP", 0x4BFA: "KDGKBDIACRUC",
	0x541E: "TIOCGSERIAL", 0x542E: "TIOCGRS485", 0x545D: "TIOCGICOUNT", 0x5460: "FIOQSIZE",
	0x5415: "TIOCMGET", 0x5411: "TIOCOUTQ", 0x5424: "TIOCGETD", 0x5441: "TIOCGPTPEER",
	0x80045430: "TIOCGPTN", 0x40045431: "TIOCSPTLCK",
	0x400454ca: "TUNSETIFF", 0x800454d2: "TUNGETIFF", 0x800454cf: "TUNGETFEATURES",
	0x8904: "SIOCGPGRP", 0x8910: "SIOCGIFNAME", 0x8912: "SIOCGIFCONF", 0x8913: "SIOCGIFFLAGS",
	0x8914: "SIOCSIFFLAGS", 0x8915: "SIOCGIFADDR", 0x8917: "SIOCGIFDSTADDR",
	0x8919: "SIOCGIFBRDADDR", 0x891b: "SIOCGIFNETMASK", 0x891d: "SIOCGIFMETRIC",
	0x891f: "SIOCGIFMEM", 0x8921: "SIOCGIFMTU", 0x8925: "SIOCGIFENCAP", 0x8927: "SIOCGIFHWADDR",
	0x8933: "SIOCGIFINDEX", 0x8935: "SIOCGIFPFLAGS", 0x8938: "SIOCGIFCOUNT",
	0x8940: "SIOCGIFBR", 0x8941: "SIOCSIFBR", 0x8942: "SIOCGIFTXQLEN", 0x8946: "SIOCETHTOOL",
	0x8947: "SIOCGMIIPHY", 0x8948: "SIOCGMIIREG", 0x894B: "SIOCOUTQNSD", 0x8954: "SIOCGARP",
	0x8961: "SIOCGRARP", 0x8970: "SIOCGIFMAP", 0x8982: "SIOCGIFVLAN",
	0x89a0: "SIOCBRADDBR", 0x89a1: "SIOCBRDELBR", 0x89a2: "SIOCBRADDIF", 0x89a3: "SIOCBRDELIF",
	0x89b1: "SIOCGHWTSTAMP", 0x89F0: "SIOCDEVPRIVATE",
}

func init() {
	names := argConsts["ioctl/1"]
	for k, v := range ioctlNames {
		if _, ok := names[k]; !ok {
			names[k] = v
		}
	}
}
