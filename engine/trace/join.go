package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Join writes to w the recording that consecutive segments make together
// (record --keep-last writes one segment per snapshot): the first segment
// whole, then the events of each next one after its first, the snapshot
// its recording continued from, which the events before it lead to. Blobs
// are copied as the events that refer to them come (a mapping's, a
// snapshot's regions', an exec image's files and bytes), with new ids, and
// so are the identities of the files they were read from (Footer.Sources).
// It returns the footer the joined trace should close with: the last
// segment's, with the counts of the whole.
func Join(w *Writer, segments []string) (*Footer, error) {
	if len(segments) == 0 {
		return nil, errors.New("trace: join: no segment")
	}
	var last *Footer
	for i, path := range segments {
		foot, err := joinOne(w, path, i == 0)
		if err != nil {
			return nil, fmt.Errorf("trace: join %s: %w", path, err)
		}
		last = foot
	}
	f := &Footer{}
	if last != nil {
		*f = *last
	}
	f.FrameEvents = nil
	return f, nil
}

// joinOne copies one segment into w.
func joinOne(w *Writer, path string, first bool) (*Footer, error) {
	rd, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	ids := map[uint32]uint32{}
	blob := func(id uint32) (uint32, error) {
		if n, ok := ids[id]; ok {
			return n, nil
		}
		data, err := rd.Blob(id)
		if err != nil {
			return 0, err
		}
		n, err := w.AddBlob(data)
		if err != nil {
			return 0, err
		}
		ids[id] = n
		if key, ok := rd.BlobSource(id); ok {
			w.noteSource(n, key)
		}
		return n, nil
	}
	for i := 0; ; i++ {
		e, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if i == 0 && !first {
			if e.Kind != KindSnapshot {
				return nil, errors.New("a later segment must start with a snapshot")
			}
			continue
		}
		if e.Kind == KindEnd && rd.Footer() != nil && rd.Footer().Interrupted == SegmentEnd {
			continue // not the end: the next segment goes on
		}
		if e.Map != nil {
			m := *e.Map
			if m.Blob, err = blob(m.Blob); err != nil {
				return nil, err
			}
			e.Map = &m
		}
		if e.Kind == KindSnapshot {
			if err := remapSnapshot(e, blob); err != nil {
				return nil, err
			}
		}
		if e.Kind == KindExec && len(e.Image) > 0 {
			if err := remapImage(e, blob); err != nil {
				return nil, err
			}
		}
		if err := w.Append(e); err != nil {
			return nil, err
		}
	}
	return rd.Footer(), nil
}

// remapSnapshot gives the regions of a snapshot event their new blob ids.
func remapSnapshot(e *Event, blob func(uint32) (uint32, error)) error {
	s, err := DecodeSnapshot(e)
	if err != nil {
		return err
	}
	for i := range s.Regions {
		for j, id := range s.Regions[i].Blobs {
			n, err := blob(id)
			if err != nil {
				return err
			}
			s.Regions[i].Blobs[j] = n
		}
	}
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	e.Data = data
	return nil
}

// remapImage gives the files and bytes of an exec event's image their new
// blob ids (a recording shorter than the ring's window is one segment, its
// execs' images and all).
func remapImage(e *Event, blob func(uint32) (uint32, error)) error {
	im, err := DecodeImage(e)
	if err != nil || im == nil {
		return err
	}
	for i := range im.Regions {
		r := &im.Regions[i]
		if r.Stored != nil {
			st := *r.Stored
			if st.Blob, err = blob(st.Blob); err != nil {
				return err
			}
			r.Stored = &st
		}
		for j, id := range r.Blobs {
			if r.Blobs[j], err = blob(id); err != nil {
				return err
			}
		}
	}
	data, err := EncodeImage(im)
	if err != nil {
		return err
	}
	e.Image = data
	return nil
}

// SegmentEnd is the Interrupted reason of a segment that the next one
// continues (record --keep-last): its KindEnd is not the recording's end.
const SegmentEnd = "continued in the next segment"
