package ptrace

// WithScratch runs f with n bytes of scratch memory below the stack pointer
// of stopped thread tid (past the red zone), for the buffers of injected
// calls, and puts the bytes back afterwards. The attach snapshot reads
// kernel state (sigaction, sigaltstack) through such buffers and must leave
// the process's memory as it found it.
func WithScratch(tid int, m *Mem, n int, f func(addr uint64) error) error {
	return withScratch(tid, m, n, f)
}

// StatusFields reads the named fields of a /proc status file as text ("" for
// a field that is missing): the attach snapshot takes each thread's pending
// signals from there.
func StatusFields(path string, names ...string) []string {
	return statusFields(path, names...)
}
