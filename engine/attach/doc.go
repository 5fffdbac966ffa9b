// Package attach seizes a process that is already running, takes a
// snapshot of everything a replay needs to rebuild it, and lets it go
// unharmed. It is the first step of recording a live process (issue 14);
// the CLI does not offer it yet.
//
// Seize stops every thread with PTRACE_SEIZE and PTRACE_INTERRUPT, never
// with PTRACE_O_EXITKILL: if rewind dies, the kernel detaches the threads
// and the process goes on (a recorder must never kill the service it
// watched). The thread list is read again until no new thread shows up,
// since a thread that is not stopped yet may create others.
//
// Snapshot reads the state into plain Go types, one file per concern:
// memory.go (every mapping with its bytes, or, for read-only private file
// mappings, a reference to the file with the SHA-256 of the bytes in
// memory), threads.go (registers, XSAVE, TLS bases, masks, alternate
// stacks, pending signals), signals.go (every sigaction, read by injecting
// rt_sigaction with a NULL new action), files.go (descriptors, program
// break, current directory, rlimits, auxv, command line).
//
// How the later steps use it: the recorder writes the snapshot at the head
// of the trace, in place of the exec a recording normally starts from, and
// records from the stopped threads on. Replay starts a small process under
// ptrace, unmaps everything, maps each Mapping at its address (opening the
// file for a FileRef after checking its hash, or filling the bytes),
// restores the program break, the descriptors (files reopened at their
// positions, pipes and sockets as replay stand-ins, since their traffic
// comes from the trace), the handlers, the rlimits and the directory, then
// re-creates each thread with ptrace.AddThread from its Thread state.
// Reverse execution stops at the snapshot.
//
// Detach leaves the process as it was: the code bytes and stack scratch
// that injected calls use are put back, signals that stopped a thread while
// it was being seized are queued again with their siginfo, and every thread
// is resumed. Signals sent while the process was stopped stay pending in
// the kernel and are delivered once it runs.
package attach
