package syscalls

// prctl options (linux/prctl.h). The option is an int: the upper half of the
// register is not the kernel's.
const (
	prGetPdeathsig          = 2
	prGetUnalign            = 5
	prGetFpemu              = 9
	prGetFpexc              = 11
	prSetName               = 15
	prGetName               = 16
	prGetEndian             = 19
	prGetTSC                = 25
	prSetTSC                = 26
	prSetMM                 = 35
	prGetChildSubreaper     = 37
	prGetTidAddress         = 40
	prSetSyscallUserDispat  = 59
	prSchedCore             = 62
	prSetMDWE               = 65
	prGetShadowStackStatus  = 74
	prSetVMA                = 0x53564d41
	prGetAuxv               = 0x41555856
	prSetMMMapSize          = 15 // PR_SET_MM_MAP_SIZE
	prSchedCoreGet          = 0
	prSysDispatchOff        = 0
	prctlNameLen            = 16 // TASK_COMM_LEN
	prctlTidAddressLen      = 8
	prctlShadowStackStatLen = 8
)

// PrctlTSC and PrctlGetTSC are PR_SET_TSC and PR_GET_TSC, which the recorder
// emulates over its own use of PR_TSC_SIGSEGV.
const (
	PrctlGetTSC = prGetTSC
	PrctlSetTSC = prSetTSC
)

func prctlOption(c *Call) uint32 { return uint32(c.Args[0]) }

// prctlOut lists what the GET forms write through their second argument;
// the other forms answer in the result or write nothing.
func prctlOut(c *Call, _ Memory) ([]Range, error) {
	switch prctlOption(c) {
	case prGetPdeathsig, prGetUnalign, prGetFpemu, prGetFpexc, prGetEndian, prGetTSC, prGetChildSubreaper:
		return span(c.Args[1], 4), nil
	case prGetName:
		return span(c.Args[1], prctlNameLen), nil
	case prGetTidAddress:
		return span(c.Args[1], prctlTidAddressLen), nil
	case prGetShadowStackStatus:
		return span(c.Args[1], prctlShadowStackStatLen), nil
	case prGetAuxv:
		// The result is the size of the whole vector; at most arg3 bytes
		// were copied.
		if c.Ret <= 0 {
			return nil, nil
		}
		return span(c.Args[1], min(uint64(c.Ret), c.Args[2])), nil
	case prSetMM:
		if uint32(c.Args[1]) == prSetMMMapSize {
			return span(c.Args[2], 4), nil // the size of struct prctl_mm_map
		}
	case prSchedCore:
		if uint32(c.Args[1]) == prSchedCoreGet {
			return span(c.Args[4], 8), nil // the core-scheduling cookie
		}
	}
	return nil, nil
}

// prctlPolicy re-executes the forms that shape what replay looks at or what
// later re-executed calls do: the thread's name (shown by the debugger), a
// mapping's name, the memory-deny-write-execute policy mprotect obeys, and
// the mm fields brk and /proc answer from. The others are emulated.
func prctlPolicy(c *Call) Policy {
	switch prctlOption(c) {
	case prSetName, prSetVMA, prSetMDWE, prSetMM:
		if prctlOption(c) == prSetMM && uint32(c.Args[1]) == prSetMMMapSize {
			return Emulate
		}
		return Reexec
	}
	return Emulate
}

// prctlUnsupported: syscall user dispatch turns the thread's system calls
// into SIGSYS signals outside an allowed region, which the recorder would
// take for calls; replayed without it, the calls would run instead.
func prctlUnsupported(c *Call) string {
	if prctlOption(c) == prSetSyscallUserDispat && c.Args[1] != prSysDispatchOff {
		return "PR_SET_SYSCALL_USER_DISPATCH turns system calls into SIGSYS signals, which rewind does not record"
	}
	return ""
}
