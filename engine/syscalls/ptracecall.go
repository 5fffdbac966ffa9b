package syscalls

// The program's own ptrace calls. A task has one tracer, and rewind is the
// tracer of the program: the recorder emulates the program's tracing of
// its own processes (engine/record/emuptrace.go) and never lets the call
// reach the kernel. The raw system call stores what the PEEK and GET
// requests read through the data argument (or addr), which replay injects.

// ptrace requests (linux/ptrace.h, asm/ptrace-abi.h).
const (
	ptracePeekText        = 1
	ptracePeekData        = 2
	ptracePeekUser        = 3
	ptraceGetRegs         = 12
	ptraceGetFPRegs       = 14
	ptraceGetThreadArea   = 25
	ptraceArchPrctl       = 30
	ptraceGetEventMsg     = 0x4201
	ptraceGetSiginfo      = 0x4202
	ptraceGetRegset       = 0x4204
	ptracePeekSiginfo     = 0x4209
	ptraceGetSigmask      = 0x420a
	ptraceSeccompFilter   = 0x420c
	ptraceSeccompMetadata = 0x420d
	ptraceGetSyscallInfo  = 0x420e
	ptraceGetRseqConfig   = 0x420f
	ptraceGetSUDConfig    = 0x4211

	userRegsSize      = 216 // struct user_regs_struct
	userFPRegsSize    = 512 // struct user_i387_struct
	userDescSize      = 16  // struct user_desc
	siginfoSize       = 128
	seccompMetaSize   = 16 // struct seccomp_metadata
	rseqConfigSize    = 32 // struct ptrace_rseq_configuration
	sudConfigSize     = 32 // struct ptrace_sud_config
	sockFilterSize    = 8  // struct sock_filter
	archGetFS         = 0x1003
	archGetGS         = 0x1004
	ptraceSigsetBytes = 8
)

// ptraceOut lists what a successful request wrote in the caller.
func ptraceOut(c *Call, m Memory) ([]Range, error) {
	addr, data := c.Args[2], c.Args[3]
	switch c.Args[0] {
	case ptracePeekText, ptracePeekData, ptracePeekUser, ptraceGetEventMsg:
		return span(data, 8), nil
	case ptraceGetRegs:
		return span(data, userRegsSize), nil
	case ptraceGetFPRegs:
		return span(data, userFPRegsSize), nil
	case ptraceGetThreadArea:
		return span(data, userDescSize), nil
	case ptraceArchPrctl:
		if data == archGetFS || data == archGetGS {
			return span(addr, 8), nil
		}
	case ptraceGetSiginfo:
		return span(data, siginfoSize), nil
	case ptraceGetRegset:
		// The kernel shortens iov_len to what it wrote at iov_base.
		if data == 0 {
			return nil, nil
		}
		b, err := readFull(m, data, 16)
		if err != nil {
			return nil, err
		}
		return append([]Range{{Addr: data, Len: 16}}, span(le64(b), le64(b[8:]))...), nil
	case ptracePeekSiginfo:
		return span(data, uint64(c.Ret)*siginfoSize), nil
	case ptraceGetSigmask:
		return span(data, min(addr, ptraceSigsetBytes)), nil
	case ptraceSeccompFilter:
		return span(data, uint64(c.Ret)*sockFilterSize), nil
	case ptraceSeccompMetadata:
		return span(data, min(addr, seccompMetaSize)), nil
	case ptraceGetSyscallInfo:
		return span(data, min(addr, uint64(c.Ret))), nil
	case ptraceGetRseqConfig:
		return span(data, min(addr, rseqConfigSize)), nil
	case ptraceGetSUDConfig:
		return span(data, min(addr, sudConfigSize)), nil
	}
	return nil, nil
}
