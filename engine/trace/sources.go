package trace

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/klauspost/compress/zstd"
)

// Kinds of packed files (PackedFile.Kind).
const (
	// PackedSource is a source file the recorded programs' debug
	// information names.
	PackedSource = "source"
	// PackedDebug is a separate debug file (found by build-id or
	// .gnu_debuglink) of a recorded executable or library.
	PackedDebug = "debug"
)

// PackedFile is a file `rewind pack` stored in the trace so that the
// recording debugs where the file is absent: its bytes are a blob no event
// maps, its identity is in the footer (Footer.Packed).
type PackedFile struct {
	// Kind is PackedSource or PackedDebug.
	Kind string `json:"kind"`
	// Path is where the file was on the machine that packed it: the name
	// the debug information uses for a source file, the path the debug
	// file lookup found for a debug file.
	Path string `json:"path"`
	// Blob holds the file's bytes.
	Blob uint32 `json:"blob"`
	// Size is the file's size in bytes.
	Size int64 `json:"size"`
	// SHA256 is the hex SHA-256 of the file.
	SHA256 string `json:"sha256"`
	// Image is, for a debug file, the executable or library whose debug
	// file it is.
	Image string `json:"image,omitempty"`
	// BuildID is, for a debug file, the image's GNU build-id in hex (""
	// when it has none: the file was found by .gnu_debuglink).
	BuildID string `json:"build_id,omitempty"`
}

// Packed returns the files packed into the trace (nil when none, or when
// the footer is missing: a trace cut short loses its index of them).
func (r *Reader) Packed() []PackedFile {
	if r.footer == nil {
		return nil
	}
	return r.footer.Packed
}

// PackedSource returns the packed source file that had path.
func (r *Reader) PackedSource(path string) (PackedFile, bool) {
	for _, p := range r.Packed() {
		if p.Kind == PackedSource && p.Path == path {
			return p, true
		}
	}
	return PackedFile{}, false
}

// PackedDebug returns the packed debug file of the image at path whose
// build-id is buildID (hex, "" when it has none). A build-id names the
// image's contents, so it decides when both sides have one; the path
// decides otherwise.
func (r *Reader) PackedDebug(image, buildID string) (PackedFile, bool) {
	for _, p := range r.Packed() {
		if p.Kind != PackedDebug {
			continue
		}
		if buildID != "" && p.BuildID != "" {
			if p.BuildID == buildID {
				return p, true
			}
			continue
		}
		if p.Image == image {
			return p, true
		}
	}
	return PackedFile{}, false
}

// ReadPacked returns the bytes of a packed file, checked against its size
// and SHA-256.
func (r *Reader) ReadPacked(p PackedFile) ([]byte, error) {
	data, err := r.Blob(p.Blob)
	if err != nil {
		return nil, fmt.Errorf("packed %s %s: %w", p.Kind, p.Path, err)
	}
	if int64(len(data)) != p.Size || sha256Hex(data) != p.SHA256 {
		return nil, fmt.Errorf("trace: %s: packed %s %s: its bytes do not match the footer's size and SHA-256", r.path, p.Kind, p.Path)
	}
	return data, nil
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// PackWant is a file Pack should store, if this machine has it.
type PackWant struct {
	Kind string // PackedSource or PackedDebug
	Path string
	// Image and BuildID identify the image of a debug file (PackedFile).
	Image, BuildID string
}

// PackLimits bound what Pack stores: sources can be large or many.
type PackLimits struct {
	// MaxSource is the largest source file stored, in bytes.
	MaxSource int64
	// MaxDebug is the largest debug file stored, in bytes.
	MaxDebug int64
	// MaxTotal bounds the packed files together, in bytes.
	MaxTotal int64
}

// DefaultPackLimits are the limits of rewind pack and record --with-sources.
var DefaultPackLimits = PackLimits{MaxSource: 4 << 20, MaxDebug: 256 << 20, MaxTotal: 256 << 20}

// PackSkip is a file Pack found but did not store, and why.
type PackSkip struct {
	Kind, Path string
	Size       int64
	Reason     string
}

// PackReport says what Pack did.
type PackReport struct {
	// Added are the files stored now (new, or changed since the last pack).
	Added []PackedFile
	// Kept are files a previous pack stored that stay as they were.
	Kept []PackedFile
	// Skipped are files over a limit.
	Skipped []PackSkip
	// Missing are the files wanted that this machine does not have (a
	// system library's sources, usually).
	Missing []PackWant
	// Rewritten says the trace file was replaced: false when it already
	// held exactly these files, and no events frame stored raw.
	Rewritten bool
	// Compressed counts the events frames the recording stored raw, its
	// writer behind (raw.go), that the trace now holds compressed.
	Compressed int
}

// packEntry is a file of the new manifest with its bytes (nil: an old
// packed file, copied from the trace).
type packEntry struct {
	PackedFile
	data []byte
}

// Pack stores the wanted files that exist on this machine, within lim,
// into the finished trace at path, keeping what an earlier pack stored
// that this machine lacks. The trace is rewritten to a temporary file in
// its directory and renamed over it: on failure the original is
// untouched. Packing the same files again leaves the file as it is.
func Pack(path string, wants []PackWant, lim PackLimits) (*PackReport, error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if st := r.Status(); st.Condition != Complete {
		return nil, fmt.Errorf("cannot pack %s: only a finished, sound recording can be packed: %s", path, st.Message)
	}
	old := r.footer.Packed
	firstPacked := len(r.blobs) - len(old)
	for i, p := range old {
		if firstPacked < 0 || int(p.Blob) != firstPacked+i {
			return nil, fmt.Errorf("cannot pack %s: the footer's packed files are not the trace's last blobs", path)
		}
	}

	rep := &PackReport{}
	entries, err := packEntries(wants, old, lim, rep)
	if err != nil {
		return nil, err
	}
	smaller, err := r.compressRaw()
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", path, err)
	}
	rep.Compressed = len(smaller)
	if samePacked(old, entries) && rep.Compressed == 0 {
		return rep, nil
	}
	for i := range entries {
		entries[i].Blob = uint32(firstPacked + i)
		if entries[i].data == nil {
			if entries[i].data, err = r.ReadPacked(old[oldIndex(old, entries[i].PackedFile)]); err != nil {
				return nil, err
			}
		}
	}
	for i := range rep.Added {
		for _, e := range entries {
			if e.Kind == rep.Added[i].Kind && e.Path == rep.Added[i].Path {
				rep.Added[i].Blob = e.Blob
			}
		}
	}
	foot := *r.footer
	foot.Blobs = firstPacked + len(entries)
	foot.Packed = nil
	for _, e := range entries {
		foot.Packed = append(foot.Packed, e.PackedFile)
	}
	if err := r.rewrite(path, firstPacked, entries, &foot, smaller); err != nil {
		return nil, err
	}
	rep.Rewritten = true
	return rep, nil
}

// packEntries decides the new manifest: sources first (small and the
// most useful), then debug files, each kind by path.
func packEntries(wants []PackWant, old []PackedFile, lim PackLimits, rep *PackReport) ([]packEntry, error) {
	seen := map[[2]string]bool{}
	var list []PackWant
	for _, w := range wants {
		k := [2]string{w.Kind, w.Path}
		if w.Path == "" || seen[k] {
			continue
		}
		seen[k] = true
		list = append(list, w)
	}
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].Kind != list[j].Kind {
			return list[i].Kind == PackedSource
		}
		return list[i].Path < list[j].Path
	})
	var entries []packEntry
	var total int64
	found := map[[2]string]bool{}
	skip := func(sk PackSkip) {
		// One an earlier pack stored stays (the loop on old below): it
		// is not skipped.
		if oldIndex(old, PackedFile{Kind: sk.Kind, Path: sk.Path}) < 0 {
			rep.Skipped = append(rep.Skipped, sk)
		}
	}
	for _, w := range list {
		st, err := os.Stat(w.Path)
		if err != nil || !st.Mode().IsRegular() {
			rep.Missing = append(rep.Missing, w)
			continue
		}
		limit, flag := lim.MaxSource, "--max-source-size"
		if w.Kind == PackedDebug {
			limit, flag = lim.MaxDebug, "--max-debug-size"
		}
		if st.Size() > limit {
			skip(PackSkip{Kind: w.Kind, Path: w.Path, Size: st.Size(),
				Reason: fmt.Sprintf("larger than the %s limit of one %s file (%s)", FormatSize(limit), w.Kind, flag)})
			continue
		}
		data, err := os.ReadFile(w.Path)
		if err != nil {
			skip(PackSkip{Kind: w.Kind, Path: w.Path, Size: st.Size(), Reason: fmt.Sprintf("cannot be read: %v", err)})
			continue
		}
		if total+int64(len(data)) > lim.MaxTotal {
			skip(PackSkip{Kind: w.Kind, Path: w.Path, Size: int64(len(data)),
				Reason: fmt.Sprintf("would take the packed files past their %s total (--max-total-size)", FormatSize(lim.MaxTotal))})
			continue
		}
		total += int64(len(data))
		found[[2]string{w.Kind, w.Path}] = true
		p := PackedFile{Kind: w.Kind, Path: w.Path, Size: int64(len(data)), SHA256: sha256Hex(data), Image: w.Image, BuildID: w.BuildID}
		if i := oldIndex(old, p); i >= 0 && old[i].SHA256 == p.SHA256 && old[i].Image == p.Image && old[i].BuildID == p.BuildID {
			rep.Kept = append(rep.Kept, old[i])
			entries = append(entries, packEntry{PackedFile: old[i], data: data})
			continue
		}
		rep.Added = append(rep.Added, p)
		entries = append(entries, packEntry{PackedFile: p, data: data})
	}
	// What an earlier pack stored and this machine lacks (or now skips)
	// stays: a trace packed elsewhere keeps its files when packed again.
	for _, p := range old {
		if !found[[2]string{p.Kind, p.Path}] {
			rep.Kept = append(rep.Kept, p)
			entries = append(entries, packEntry{PackedFile: p})
		}
	}
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		if a.Kind != b.Kind {
			return a.Kind == PackedSource
		}
		return a.Path < b.Path
	})
	return entries, nil
}

// oldIndex finds a packed file of the same kind and path in old, or -1.
func oldIndex(old []PackedFile, p PackedFile) int {
	for i, o := range old {
		if o.Kind == p.Kind && o.Path == p.Path {
			return i
		}
	}
	return -1
}

// samePacked says whether the new manifest is the old one.
func samePacked(old []PackedFile, entries []packEntry) bool {
	if len(old) != len(entries) {
		return false
	}
	for i, e := range entries {
		o := old[i]
		if o.Kind != e.Kind || o.Path != e.Path || o.SHA256 != e.SHA256 || o.Image != e.Image || o.BuildID != e.BuildID {
			return false
		}
	}
	return true
}

// compressRaw compresses the events frames held uncompressed (a zstd frame
// of raw blocks, larger than what it holds: those a writer that fell
// behind stored raw, raw.go), and returns the frames, by index, that it
// made smaller: packing twice leaves the file as it is.
func (r *Reader) compressRaw() (map[int][]byte, error) {
	var enc *zstd.Encoder
	smaller := map[int][]byte{}
	for i, fi := range r.frames {
		if !rawEvents(fi) {
			continue
		}
		if enc == nil {
			var err error
			if enc, err = newEncoder(); err != nil {
				return nil, err
			}
			defer enc.Close()
		}
		payload, err := r.readFrame(i, nil, nil)
		if err != nil {
			return nil, err
		}
		if b := appendFrame(nil, enc, FrameEvents, payload); len(b) < FrameHeaderSize+int(fi.clen)*9/10 {
			smaller[i] = b
		}
	}
	return smaller, nil
}

// rewrite writes the trace again beside path: its frames up to the first
// packed blob, as they are but for events frames stored raw, compressed
// where that makes them smaller, then the packed files and the footer;
// and renames it over path.
func (r *Reader) rewrite(path string, firstPacked int, entries []packEntry, foot *Footer, smaller map[int][]byte) (err error) {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("pack %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.packing")
	if err != nil {
		return fmt.Errorf("pack %s: %w: %w", path, ErrWrite, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	werr := func(err error) error { return fmt.Errorf("pack %s: %w: %w", path, ErrWrite, err) }
	if _, err := io.Copy(tmp, io.NewSectionReader(r.ra, 0, int64(PreambleSize))); err != nil {
		return werr(err)
	}
	skip := map[int]bool{}
	for id := firstPacked; id < len(r.blobs); id++ {
		skip[r.blobs[id]] = true
	}
	enc, err := newEncoder()
	if err != nil {
		return fmt.Errorf("pack %s: %w", path, err)
	}
	defer enc.Close()
	var buf []byte
	for i, fi := range r.frames {
		if skip[i] {
			continue
		}
		if b, ok := smaller[i]; ok {
			if _, err := tmp.Write(b); err != nil {
				return werr(err)
			}
			continue
		}
		if _, err := io.Copy(tmp, io.NewSectionReader(r.ra, fi.off, FrameHeaderSize+int64(fi.clen))); err != nil {
			return werr(err)
		}
	}
	for _, e := range entries {
		payload := binary.LittleEndian.AppendUint32(make([]byte, 0, 4+len(e.data)), e.Blob)
		payload = append(payload, e.data...)
		buf = appendFrame(buf[:0], enc, FrameBlob, payload)
		if _, err := tmp.Write(buf); err != nil {
			return werr(err)
		}
	}
	fj, err := json.Marshal(foot)
	if err != nil {
		return fmt.Errorf("pack %s: %w", path, err)
	}
	if _, err := tmp.Write(appendFrame(buf[:0], enc, FrameFooter, fj)); err != nil {
		return werr(err)
	}
	if err := tmp.Chmod(st.Mode().Perm()); err != nil {
		return werr(err)
	}
	if err := tmp.Sync(); err != nil {
		return werr(err)
	}
	if err := tmp.Close(); err != nil {
		return werr(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return werr(err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync() // not every file system syncs a directory; the file is on disk
		d.Close()
	}
	return nil
}

// FormatSize writes a byte count the way pack's limits are given.
func FormatSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
