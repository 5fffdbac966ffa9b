package syscalls

import "syscall"

// Rules of the administration, namespace, LSM and old x86 calls: what the
// few that write into the caller's memory write.

// syslog actions (SYSLOG_ACTION_*).
const (
	syslogRead      = 2
	syslogReadAll   = 3
	syslogReadClear = 4
)

// syslogOut: the three read actions copy the returned number of bytes of
// the kernel log into the buffer.
func syslogOut(c *Call, _ Memory) ([]Range, error) {
	switch int32(c.Args[0]) {
	case syslogRead, syslogReadAll, syslogReadClear:
		return retBytes(1, 2)(c, nil)
	}
	return nil, nil
}

// syslogBlocks: SYSLOG_ACTION_READ waits for new messages.
func syslogBlocks(c *Call) bool { return int32(c.Args[0]) == syslogRead }

// quotaSizes gives what each reading quotactl command writes at addr.
var quotaSizes = map[uint32]uint64{
	0x800004: 4,   // Q_GETFMT
	0x800005: 24,  // Q_GETINFO: struct if_dqinfo
	0x800007: 72,  // Q_GETQUOTA: struct if_dqblk
	0x800009: 72,  // Q_GETNEXTQUOTA: struct if_nextdqblk
	0x5803:   112, // Q_XGETQUOTA: struct fs_disk_quota
	0x5805:   80,  // Q_XGETQSTAT: struct fs_quota_stat
	0x5808:   160, // Q_XGETQSTATV: struct fs_quota_statv
	0x5809:   112, // Q_XGETNEXTQUOTA
}

// quotactlOut serves quotactl (command in argument 0) and quotactl_fd (in
// 1): the command is QCMD(subcommand, type) = subcommand<<8 | type; both
// write at argument 3.
func quotactlOut(cmd int) part {
	return func(c *Call, _ Memory) ([]Range, error) {
		return span(c.Args[3], quotaSizes[uint32(c.Args[cmd])>>8]), nil
	}
}

// modify_ldt functions.
const (
	ldtRead        = 0
	ldtReadDefault = 2
)

// modifyLdtPolicy: writing an LDT entry changes what segment loads in user
// code do, so replay makes it again; reading one is emulated.
func modifyLdtPolicy(c *Call) Policy {
	switch int32(c.Args[0]) {
	case ldtRead, ldtReadDefault:
		return Emulate
	}
	return Reexec
}

func modifyLdtOut(c *Call, _ Memory) ([]Range, error) {
	switch int32(c.Args[0]) {
	case ldtRead, ldtReadDefault:
		return retBytes(1, 2)(c, nil)
	}
	return nil, nil
}

// sysfsOut: option 2 copies a filesystem type's name, NUL-terminated.
func sysfsOut(c *Call, _ Memory) ([]Range, error) {
	if int32(c.Args[0]) != 2 || c.Args[2] == 0 {
		return nil, nil
	}
	return []Range{{Addr: c.Args[2], Len: 256, CString: true}}, nil
}

// lsmSizeOut serves lsm_get_self_attr and lsm_list_modules: the size word
// (argument sizeArg) is written on success and on E2BIG, which is how
// callers learn how much to allocate; on success the buffer holds *size
// bytes (contexts) or ret ids of 8 bytes.
func lsmSizeOut(buf, sizeArg int, ids bool) rangesFn {
	return func(c *Call, m Memory) ([]Range, error) {
		if c.Ret < 0 && c.Ret != -int64(syscall.E2BIG) {
			return nil, nil
		}
		rs := span(c.Args[sizeArg], 4)
		if c.Ret < 0 {
			return rs, nil
		}
		if ids {
			return append(rs, span(c.Args[buf], uint64(c.Ret)*8)...), nil
		}
		n, err := u32(m, c.Args[sizeArg])
		if err != nil {
			return rs, err
		}
		return append(rs, span(c.Args[buf], uint64(n))...), nil
	}
}

// spliceNonblock is SPLICE_F_NONBLOCK.
const spliceNonblock = 2

func vmspliceBlocks(c *Call) bool { return c.Args[3]&spliceNonblock == 0 }

// Reasons for the calls marked Unsupported.
const (
	whyNotImplemented = "Linux does not implement it on x86-64"
	whyRemoved        = "it was removed from Linux"
	whyPortIO         = "it gives the program port I/O, whose in and out instructions read hardware outside system calls"
	whyRemap          = "it rearranges a file mapping's pages, which replay maps from a copy"
	whyUselib         = "it maps an a.out library"
)
