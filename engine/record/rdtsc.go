package record

// rdtsc reads the time-stamp counter for a trapped rdtsc of the tracee.
func rdtsc() uint64

// rdtscp reads the time-stamp counter and TSC_AUX for a trapped rdtscp.
func rdtscp() (tsc uint64, aux uint32)

// rdrand runs rdrand for a patched rdrand of the tracee: the value and
// whether the CPU had one (CF).
func rdrand() (v uint64, ok bool)

// rdseed runs rdseed for a patched rdseed of the tracee.
func rdseed() (v uint64, ok bool)
