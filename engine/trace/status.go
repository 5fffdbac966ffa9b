package trace

import (
	"errors"
	"fmt"
)

// Condition says whether a trace holds the whole recording.
type Condition int

const (
	// Complete: the recording was closed normally (also when it was
	// interrupted: the footer says so) and every frame is sound.
	Complete Condition = iota
	// Unfinished: the recording did not finish (rewind was killed, the
	// machine stopped, or it is still under way): the trace has no footer,
	// or ends inside a frame.
	Unfinished
	// Damaged: a frame fails its CRC check or cannot be decoded, or the
	// footer disagrees with the frames.
	Damaged
)

// String names the condition.
func (c Condition) String() string {
	switch c {
	case Complete:
		return "complete"
	case Unfinished:
		return "unfinished"
	case Damaged:
		return "damaged"
	}
	return fmt.Sprintf("Condition(%d)", int(c))
}

// Status says how much of a trace can be used, and why not all of it.
type Status struct {
	Condition Condition
	// Usable is the number of events that can be read, and replayed:
	// #0 to #Usable-1.
	Usable int64
	// Total is the number of events the recording wrote (the footer's
	// count), or -1 when the trace cannot tell.
	Total int64
	// Message is one line for the user, "" for a complete trace: what is
	// wrong, the frame at fault and the events it held, and the counts.
	Message string
}

// eventError is an event that cannot be decoded in a frame that passed its
// checks.
type eventError struct {
	event int64
	err   error
}

func (e *eventError) Error() string { return fmt.Sprintf("event %d: %v", e.event, e.err) }

func (e *eventError) Unwrap() error { return e.err }

// blobError stops the stream at an event that maps a blob whose frame is
// damaged.
type blobError struct {
	blob uint32
	path string // of the mapped file, when the event names it
	err  error  // the blob frame's *frameError
}

func (e *blobError) Error() string { return fmt.Sprintf("blob %d: %v", e.blob, e.err) }

func (e *blobError) Unwrap() error { return e.err }

// Check opens the trace at path and returns its Status. A trace whose
// footer indexes its frames is checked without decoding its events.
func Check(path string) (Status, error) {
	r, err := Open(path)
	if err != nil {
		return Status{}, err
	}
	defer r.Close()
	return r.Status(), nil
}

// Status reports how much of the trace is usable and why not all of it.
// Before Next has reached the end, it reads the rest of the trace to find
// out (the events are not returned: call it after reading what you need).
func (r *Reader) Status() Status {
	if !r.done && !r.verifyRest() {
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	}
	return r.status()
}

// Truncated returns a one-line warning when the trace is incomplete, ""
// for a complete trace. Once Next has returned io.EOF it is Status's
// message; before, it says only what Open found (a missing footer, a frame
// that ends the file early), without counts.
func (r *Reader) Truncated() string {
	if r.done {
		return r.status().Message
	}
	switch {
	case r.scanStop != nil:
		return "the trace ends early: " + r.scanStop.Error()
	case r.footer == nil:
		return "the recording did not finish (the trace has no footer)"
	}
	return ""
}

// verifyRest is Status's shortcut for a trace whose footer indexes its
// frames: the frames Next has not read (and the blobs no event mapped yet)
// only need their CRC checked for the footer's count to be the answer. It
// reports false, changing nothing, when that cannot be shown.
func (r *Reader) verifyRest() bool {
	if r.scanStop != nil || r.frameIndex() == nil {
		return false
	}
	var buf []byte
	var err error
	for i := r.next; i < len(r.frames); i++ {
		if buf, err = r.readRaw(i, buf); err != nil {
			return false
		}
	}
	for id, ok := range r.blobChecked {
		if !ok && r.blobs[id] < r.next {
			if buf, err = r.readRaw(r.blobs[id], buf); err != nil {
				return false
			}
		}
	}
	r.nread = r.footer.Events
	r.stopAt(nil)
	return true
}

// frameIndex returns the footer's count of events of each events frame
// when it agrees with the frames, else nil.
func (r *Reader) frameIndex() []int64 {
	if r.footer == nil {
		return nil
	}
	idx := r.footer.FrameEvents
	n := 0
	for _, f := range r.frames {
		if f.typ == FrameEvents {
			n++
		}
	}
	var sum int64
	for _, c := range idx {
		sum += c
	}
	if len(idx) != n || sum != r.footer.Events {
		return nil
	}
	return idx
}

// status builds the Status once the stream has ended.
func (r *Reader) status() Status {
	st := Status{Usable: r.nread, Total: -1}
	if r.footer != nil {
		st.Total = r.footer.Events
	}
	var be *blobError
	var fe *frameError
	switch {
	case errors.As(r.stop, &be):
		errors.As(be.err, &fe)
		what := fmt.Sprintf("blob %d", be.blob)
		if be.path != "" {
			what += ", " + be.path
		}
		st.Condition = Damaged
		st.Message = fmt.Sprintf("damaged trace: frame %d (%s) %s, and event #%d maps it; %s",
			fe.frame, what, why(fe.err), r.nread, r.counts(-1))
	case errors.As(r.stop, &fe):
		st.Condition, st.Message = r.frameProblem(fe)
	case r.stop != nil:
		st.Condition = Damaged
		st.Message = fmt.Sprintf("damaged trace: %v; %s", r.stop, r.counts(-1))
	case r.footer == nil:
		st.Condition = Unfinished
		st.Message = fmt.Sprintf("the recording did not finish (the trace has no footer); %d events usable", r.nread)
	case r.footer.Events != r.nread:
		st.Condition = Damaged
		st.Message = fmt.Sprintf("damaged trace: the footer counts %d events but the frames hold %d; %d events usable",
			r.footer.Events, r.nread, r.nread)
	}
	return st
}

// frameProblem describes the frame that ended the stream.
func (r *Reader) frameProblem(fe *frameError) (Condition, string) {
	var ee *eventError
	switch {
	case errors.Is(fe.err, errIncomplete) && fe.typ == FrameFooter:
		return Unfinished, fmt.Sprintf("the recording did not finish: the file ends inside the footer (frame %d); %d events usable",
			fe.frame, r.nread)
	case errors.Is(fe.err, errIncomplete):
		return Unfinished, fmt.Sprintf("the recording did not finish: the file ends inside frame %d%s; %d events usable",
			fe.frame, r.held(fe), r.nread)
	case fe.typ == FrameFooter:
		return Damaged, fmt.Sprintf("damaged trace: the footer (frame %d) %s; %d events usable (the footer's count of them is lost)",
			fe.frame, why(fe.err), r.nread)
	case errors.As(fe.err, &ee):
		return Damaged, fmt.Sprintf("damaged trace: event #%d in frame %d%s cannot be decoded (%v); %s",
			ee.event, fe.frame, r.held(fe), ee.err, r.counts(fe.frame))
	case fe.frame < len(r.frames):
		return Damaged, fmt.Sprintf("damaged trace: frame %d%s %s; %s", fe.frame, r.held(fe), why(fe.err), r.counts(fe.frame))
	}
	// The scan could not go past this frame: what follows is unknown.
	return Damaged, fmt.Sprintf("damaged trace: frame %d at offset %d is unreadable (%v); %d events usable, the last %d bytes of the file cannot be read",
		fe.frame, fe.offset, fe.err, r.nread, r.size-fe.offset)
}

// held says, in parentheses, what frame fe held: the range of events of an
// events frame (the end of it when the footer's index tells), or a blob.
func (r *Reader) held(fe *frameError) string {
	switch fe.typ {
	case FrameEvents:
		if idx := r.frameIndex(); idx != nil && fe.frame < len(r.frames) {
			var first int64
			k := 0
			for i := 0; i < fe.frame; i++ {
				if r.frames[i].typ == FrameEvents {
					first += idx[k]
					k++
				}
			}
			return fmt.Sprintf(" (events #%d–#%d)", first, first+idx[k]-1)
		}
		return fmt.Sprintf(" (events from #%d)", r.frameFirst)
	case FrameBlob:
		for id, i := range r.blobs {
			if i == fe.frame {
				return fmt.Sprintf(" (blob %d)", id)
			}
		}
		return fmt.Sprintf(" (blob %d)", len(r.blobs)) // the frame the scan stopped at
	}
	return ""
}

// counts says how many events are usable and, when the footer tells, how
// many are lost; from >= 0 is the first frame lost, to name the frames.
func (r *Reader) counts(from int) string {
	var frames string
	if last := len(r.frames) - 1; from >= 0 && from <= last {
		frames = fmt.Sprintf("frame %d", from)
		if from < last {
			frames = fmt.Sprintf("frames %d–%d", from, last)
		}
	}
	if r.footer != nil {
		s := fmt.Sprintf("%d of %d events usable, %d lost", r.nread, r.footer.Events, r.footer.Events-r.nread)
		if frames != "" {
			s += " (" + frames + ")"
		}
		return s
	}
	s := fmt.Sprintf("%d events usable", r.nread)
	if frames != "" {
		s += ", " + frames + " lost (the trace has no footer to count their events)"
	}
	return s
}

// why says what is wrong with a frame, after its name.
func why(err error) string {
	switch {
	case errors.Is(err, errCRC):
		return "fails its CRC check"
	case errors.Is(err, errIncomplete):
		return "is incomplete"
	}
	return fmt.Sprintf("cannot be decoded (%v)", err)
}
