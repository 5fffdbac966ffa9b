package record

import (
	"crypto/sha256"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/ptrace"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// An exec's image (trace.Image) is what makes a recording replay on a
// machine whose files differ: the executable and the loader the kernel
// mapped (stored once per trace, like every mapped file), the stack it
// wrote, the vDSO it gave. It is read at the exec stop, before rewind
// patches anything, so that replay rebuilds the process as the kernel left
// it and then patches it as it does after any exec.

// wholeWritable bounds the writable file regions kept whole in an image;
// past it only their last page is (where the kernel zeroed the tail of
// the data segment), the rest being the file's bytes.
const wholeWritable = 64 << 10

// imageCache spares an exec's image what an earlier exec of the same
// files read already (a shell's children: ~0.3 ms an exec before).
type imageCache struct {
	// files are the stored files by the device and inode the mappings
	// name, with the identity stat gave (checked at each exec: a file
	// written since is stored again).
	files map[imageFileKey]imageFile
	// tails are the blobs of writable file regions' bytes (the file's,
	// the tail of the last page zeroed by the kernel: the same at each
	// exec of the same file), and vdso the vDSO's (the kernel's, the same
	// in every process).
	tails map[imageTailKey]uint32
	vdso  map[uint64]uint32
	// gen counts the images read: a file checked in this one is not
	// checked again for its next mapping.
	gen int
}

type imageFileKey struct{ major, minor, inode uint64 }

type imageFile struct {
	stored    trace.MapFile
	size      int64
	mtimeNsec int64
	checked   int // the gen it was last checked in
}

type imageTailKey struct {
	blob               uint32
	offset, size, from uint64
}

// captureImage reads the image exec left in process pid, whose thread
// stands at rsp: its JSON, with the files and bytes it needs stored, the
// mappings it read, and the exec event's data (execData).
func (r *Recorder) captureImage(pid int, m *ptrace.Mem, rsp uint64) (image []byte, maps []ptrace.MapEntry, data []byte, err error) {
	if maps, err = ptrace.ReadMaps(pid); err != nil {
		return nil, nil, nil, err
	}
	r.images.gen++
	im := &trace.Image{}
	if im.Layout, im.Comm, err = ptrace.ReadStat(pid); err != nil {
		return nil, nil, nil, err
	}
	exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	im.Exe = strings.TrimSuffix(exe, " (deleted)")
	data = execData(pid, exe, m, im.Layout)
	for _, mp := range maps {
		rg := trace.Region{Start: mp.Start, Size: mp.End - mp.Start, Perms: mp.Perms, Offset: mp.Offset, Path: mp.Path}
		var err error
		switch {
		case mp.Path == "[vsyscall]" || strings.HasPrefix(mp.Path, "[vvar"):
			rg.Skipped = "the kernel's"
		case mp.Path == "[vdso]":
			if id, ok := r.images.vdso[rg.Size]; ok {
				rg.Blobs, rg.Runs = []uint32{id}, []trace.Run{{Off: 0, Len: rg.Size}}
				break
			}
			if err = r.imageBytes(m, &rg, 0, rg.Size); err == nil {
				if r.images.vdso == nil {
					r.images.vdso = map[uint64]uint32{}
				}
				r.images.vdso[rg.Size] = rg.Blobs[0]
			}
		case mp.Path == "[stack]":
			from := max(rsp&^(pageSize-1), mp.Start)
			err = r.imageBytes(m, &rg, from-mp.Start, mp.End-from)
		case strings.HasPrefix(mp.Path, "/"):
			stored, why := r.storeImageFile(pid, &mp)
			if stored == nil {
				im.Missing = why
				break
			}
			rg.Stored = stored
			if mp.Perms[1] == 'w' {
				err = r.imageTail(m, &rg)
			}
		case mp.Path == "":
			rg.Zero = true // .bss: the kernel maps it zero
		default:
			// [heap] (none at an exec), or a name this rewind does not know.
			err = r.imageBytes(m, &rg, 0, rg.Size)
		}
		if err != nil {
			return nil, nil, nil, err
		}
		im.Regions = append(im.Regions, rg)
	}
	image, err = trace.EncodeImage(im)
	return image, maps, data, err
}

// imageTail stores the bytes of rg, a writable file region: whole when
// small, else its last page, where the kernel zeroed the data segment's
// tail; the same at each exec of the same file.
func (r *Recorder) imageTail(m *ptrace.Mem, rg *trace.Region) error {
	from := uint64(0)
	if rg.Size > wholeWritable {
		from = rg.Size - pageSize
	}
	k := imageTailKey{blob: rg.Stored.Blob, offset: rg.Offset, size: rg.Size, from: from}
	if id, ok := r.images.tails[k]; ok {
		rg.Blobs, rg.Runs = []uint32{id}, []trace.Run{{Off: from, Len: rg.Size - from}}
		return nil
	}
	if err := r.imageBytes(m, rg, from, rg.Size-from); err != nil {
		return err
	}
	if r.images.tails == nil {
		r.images.tails = map[imageTailKey]uint32{}
	}
	r.images.tails[k] = rg.Blobs[0]
	return nil
}

// imageBytes stores size bytes of rg from off (from its start) as a blob
// of rg, once a trace: the vDSO, and the data segments of a program exec'd
// again, are the same bytes each time.
func (r *Recorder) imageBytes(m *ptrace.Mem, rg *trace.Region, off, size uint64) error {
	data := make([]byte, size)
	if _, err := m.ReadAt(data, rg.Start+off); err != nil {
		return fmt.Errorf("read %s at %#x for the exec's image: %w", rg.Path, rg.Start+off, err)
	}
	key := sha256.Sum256(data)
	id, ok := r.imageBlobs[key]
	if !ok {
		var err error
		if id, err = r.w.AddBlob(data); err != nil {
			return err
		}
		if r.imageBlobs == nil {
			r.imageBlobs = map[[32]byte]uint32{}
		}
		r.imageBlobs[key] = id
	}
	rg.Blobs = []uint32{id}
	rg.Runs = []trace.Run{{Off: off, Len: size}}
	return nil
}

// storeImageFile stores the file of mapping mp (once a trace) and says how
// replay maps it; nil and why where it cannot.
func (r *Recorder) storeImageFile(pid int, mp *ptrace.MapEntry) (*trace.MapFile, string) {
	size := mp.End - mp.Start
	path := strings.TrimSuffix(mp.Path, " (deleted)")
	k := imageFileKey{mp.Major, mp.Minor, mp.Inode}
	var st unix.Stat_t
	if f, ok := r.images.files[k]; ok && (f.checked == r.images.gen || unix.Stat(path, &st) == nil &&
		st.Ino == mp.Inode && st.Size == f.size && st.Mtim.Nano() == f.mtimeNsec) {
		f.checked = r.images.gen
		r.images.files[k] = f
		stored := f.stored
		stored.Offset, stored.Length = mp.Offset, size
		return &stored, ""
	}
	link, ok := imageFileLink(pid, mp, path)
	if !ok {
		return nil, fmt.Sprintf("%s: not the file mapped (replaced since the exec)", path)
	}
	stored, err := r.files.captureFile(link, mp.Offset, size)
	if err != nil {
		return nil, fmt.Sprintf("%s: %v", path, err)
	}
	stored.Path = path
	if unix.Stat(link, &st) == nil {
		if r.images.files == nil {
			r.images.files = map[imageFileKey]imageFile{}
		}
		r.images.files[k] = imageFile{stored: *stored, size: st.Size, mtimeNsec: st.Mtim.Nano(), checked: r.images.gen}
	}
	return stored, ""
}

// imageFileLink names the file mapping mp maps for reading: its
// /proc/PID/map_files link where rewind may open it (the file even if
// deleted or replaced), else its path, when that is the same file (device
// and inode), or the executable's link.
func imageFileLink(pid int, mp *ptrace.MapEntry, path string) (string, bool) {
	mf := fmt.Sprintf("/proc/%d/map_files/%x-%x", pid, mp.Start, mp.End)
	if f, err := os.Open(mf); err == nil {
		f.Close()
		return mf, true
	}
	for _, p := range []string{path, fmt.Sprintf("/proc/%d/exe", pid)} {
		var st unix.Stat_t
		if unix.Stat(p, &st) == nil && st.Ino == mp.Inode &&
			uint64(unix.Major(st.Dev)) == mp.Major && uint64(unix.Minor(st.Dev)) == mp.Minor {
			return p, true
		}
	}
	return "", false
}
