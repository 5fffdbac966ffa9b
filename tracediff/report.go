package tracediff

// Report is what Diff found: the two recordings, where they first part,
// and what differs after. Its JSON is `rewind diff --json`'s contract
// (docs/analysis.md, "Comparing two recordings").
type Report struct {
	A Recording `json:"a"`
	B Recording `json:"b"`
	// Same says the recordings do the same things with the same results
	// (differences every pair of runs has are not counted: Expected).
	Same bool `json:"same"`
	// First is the earliest difference in B's order of events; nil when
	// Same.
	First *Divergence `json:"first,omitempty"`
	// Differences sums up every difference by category and call, in the
	// order of their first occurrence in B.
	Differences []Difference `json:"differences"`
	// Expected sums up what differs between any two runs of any program
	// and is not counted: the loader's cycle-counter reads, AT_RANDOM.
	Expected []Difference `json:"expected,omitempty"`
}

// Recording describes one of the two recordings.
type Recording struct {
	Trace     string   `json:"trace"`
	Program   string   `json:"program"`
	Args      []string `json:"args,omitempty"`
	Events    int64    `json:"events"`
	Processes int      `json:"processes"`
	Threads   int      `json:"threads"`
	// Notice says why only part of an unfinished or damaged trace was
	// compared.
	Notice string `json:"notice,omitempty"`
}

// Categories of differences.
const (
	// CatTime: a clock read (clock_gettime, gettimeofday, time, rdtsc)
	// returned another time.
	CatTime = "time"
	// CatRandom: random bytes differ (getrandom, /dev/urandom, rdrand).
	CatRandom = "random"
	// CatData: a read returned other contents (a file, a pipe, a socket).
	CatData = "data"
	// CatResult: another call returned something else (an error, a size).
	CatResult = "result"
	// CatArgs: the same call with other arguments (a path, a size, flags).
	CatArgs = "args"
	// CatWritten: a write-like call wrote other bytes.
	CatWritten = "written"
	// CatSignal: a signal came with another code or address.
	CatSignal = "signal"
	// CatOnlyA and CatOnlyB: a step one recording has and the other not.
	CatOnlyA = "only-a"
	CatOnlyB = "only-b"
	// CatScheduling: threads ran in another order, or were preempted
	// elsewhere.
	CatScheduling = "scheduling"
	// CatExit: a process ended with another status.
	CatExit = "exit"
	// CatProcess: a process one recording has and the other not.
	CatProcess = "process"
)

// Divergence is where the two recordings first part: the same step of the
// same thread in both (or a step that one of them lacks).
type Divergence struct {
	Category string `json:"category"`
	// What says in words what differs.
	What string `json:"what"`
	// Process and Thread number the process (in order of creation) and
	// its thread (in order of creation in the process), from 1: pids and
	// tids differ between runs.
	Process int   `json:"process"`
	Thread  int   `json:"thread"`
	A       *Side `json:"a"`
	B       *Side `json:"b"`
}

// Side is one recording's side of a divergence.
type Side struct {
	// Event is the event's number; where the recording lacks the step
	// (Missing), the thread's next event there (-1: none).
	Event   int64  `json:"event"`
	Missing bool   `json:"missing,omitempty"`
	Pid     int32  `json:"pid"`
	Thread  int32  `json:"thread"`
	Text    string `json:"text,omitempty"`
	Process string `json:"command,omitempty"`
	// Moment is where the thread stands just after the event (before its
	// next one: "#N", or "end"), for goto; where the step is Missing,
	// where it would have been.
	Moment string `json:"moment"`
	// Function, File and Line are the program's own place of the event:
	// the first frame of the stack with a source line.
	Function string `json:"function,omitempty"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	// Stack is the backtrace at the event, innermost first.
	Stack []Frame `json:"stack,omitempty"`
	// StackError says why there is no stack (the replay failed, took too
	// long, or was not asked for).
	StackError string `json:"stack_error,omitempty"`
}

// Frame is one frame of a Side's stack.
type Frame struct {
	PC       string `json:"pc"`
	Function string `json:"function,omitempty"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	// Scanned marks a caller found as a return address on the stack where
	// the unwinder could not go on (code without symbols, the vDSO).
	Scanned bool `json:"scanned,omitempty"`
	// full is the source file's path, to tell the program's own code.
	full string
}

// Difference counts the differences of one category and call.
type Difference struct {
	Category string `json:"category"`
	// Name is the system call, signal or trap ("getrandom", "rdtsc").
	Name string `json:"name,omitempty"`
	// Count is how many steps differ so.
	Count int `json:"count"`
	// FirstA and FirstB are the events of the first of them (-1: none in
	// that recording).
	FirstA int64 `json:"first_a"`
	FirstB int64 `json:"first_b"`
	// TextA and TextB are their strace-style lines.
	TextA string `json:"text_a,omitempty"`
	TextB string `json:"text_b,omitempty"`
}
