package syscalls

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// bpf(cmd, attr, size) writes back into attr and through pointers held in
// attr; how much often depends on the map the command is about (its key and
// value sizes), which the recorder asks the kernel (BPF_OBJ_GET_INFO_BY_FD,
// made by the tracee). A failure writes nothing, except the verifier's (or
// BTF checker's) log, which is the point of a failed load, and the entries a
// batch lookup returned before it reached the end of the map.
//
// Bytes captured beyond what the kernel wrote (a whole attr, a buffer of the
// caller's size when fewer bytes were copied) are harmless: they hold what
// the memory held, and replay writes back the same.

// bpf commands (enum bpf_cmd).
const (
	bpfMapCreate          = 0
	bpfMapLookupElem      = 1
	bpfMapGetNextKey      = 4
	bpfProgLoad           = 5
	bpfProgTestRun        = 10
	bpfProgGetNextID      = 11
	bpfMapGetNextID       = 12
	bpfObjGetInfoByFd     = 15
	bpfProgQuery          = 16
	bpfBTFLoad            = 18
	bpfTaskFdQuery        = 20
	bpfMapLookupAndDelete = 21
	bpfBTFGetNextID       = 23
	bpfMapLookupBatch     = 24
	bpfMapLookupDelBatch  = 25
	bpfMapUpdateBatch     = 26
	bpfMapDeleteBatch     = 27
	bpfLinkGetNextID      = 31
	bpfTokenCreate        = 36
	bpfLastKnownCmd       = bpfTokenCreate

	bpfAttrMax      = 256 // more than union bpf_attr has ever been
	bpfMapInfoSize  = 88  // struct bpf_map_info
	bpfProgInfoSize = 232 // struct bpf_prog_info
)

// bpfAttrSize is how much of attr the call may have rewritten.
func bpfAttrSize(c *Call) uint64 { return min(c.Args[2], bpfAttrMax) }

// bpfUnsupported: commands newer than this table.
func bpfUnsupported(c *Call) string {
	if cmd := uint32(c.Args[0]); cmd > bpfLastKnownCmd {
		return fmt.Sprintf("bpf command %d is newer than rewind", cmd)
	}
	return ""
}

func bpfOut(c *Call, m Memory) ([]Range, error) {
	attr := c.Args[1]
	if attr == 0 {
		return nil, nil
	}
	cmd := uint32(c.Args[0])
	whole := span(attr, bpfAttrSize(c))
	failed := c.Ret < 0
	switch cmd {
	case bpfProgLoad, bpfBTFLoad:
		return bpfLogOut(c, m, whole)
	case bpfMapLookupBatch, bpfMapLookupDelBatch:
		if failed && c.Ret != -int64(syscall.ENOENT) {
			return nil, nil
		}
		return bpfBatchOut(c, m, whole)
	case bpfProgTestRun:
		if failed && c.Ret != -int64(syscall.ENOSPC) {
			return nil, nil
		}
	default:
		if failed {
			return nil, nil
		}
	}
	switch cmd {
	case bpfMapLookupElem, bpfMapLookupAndDelete, bpfMapGetNextKey:
		b, err := readFull(m, attr, 24)
		if err != nil {
			return nil, err
		}
		key, val, err := bpfMapSizes(m, le32(b))
		if err != nil {
			return nil, err
		}
		if cmd == bpfMapGetNextKey {
			return span(le64(b[16:]), key), nil
		}
		return span(le64(b[16:]), val), nil
	case bpfProgTestRun:
		b, err := readFull(m, attr, 64)
		if err != nil {
			return nil, err
		}
		rs := append(whole, span(le64(b[24:]), uint64(le32(b[12:])))...)
		return append(rs, span(le64(b[56:]), uint64(le32(b[44:])))...), nil
	case bpfProgGetNextID, bpfMapGetNextID, bpfBTFGetNextID, bpfLinkGetNextID, bpfMapUpdateBatch, bpfMapDeleteBatch:
		return whole, nil
	case bpfObjGetInfoByFd:
		return bpfInfoOut(m, attr, whole)
	case bpfProgQuery:
		b, err := readFull(m, attr, 28)
		if err != nil {
			return nil, err
		}
		n := uint64(le32(b[24:])) * 4
		rs := append(whole, span(le64(b[16:]), n)...)
		// prog_attach_flags, link_ids and link_attach_flags (Linux 6.6) share
		// the count.
		for _, off := range []uint64{32, 40, 48} {
			if off+8 > bpfAttrSize(c) {
				break
			}
			p, err := readFull(m, attr+off, 8)
			if err != nil {
				return rs, err
			}
			rs = append(rs, span(le64(p), n)...)
		}
		return rs, nil
	case bpfTaskFdQuery:
		b, err := readFull(m, attr, 24)
		if err != nil {
			return nil, err
		}
		return append(whole, span(le64(b[16:]), uint64(le32(b[12:]))+1)...), nil
	}
	return nil, nil
}

// bpfLogOut: a load with a log (log_level not zero) fills log_buf, whether
// it succeeded or not, and Linux 6.4 writes log_true_size into attr.
func bpfLogOut(c *Call, m Memory, whole []Range) ([]Range, error) {
	level, size, buf := uint64(24), uint64(28), uint64(32) // BPF_PROG_LOAD
	if uint32(c.Args[0]) == bpfBTFLoad {
		level, size, buf = 24, 20, 8
	}
	b, err := readFull(m, c.Args[1], 40)
	if err != nil {
		if c.Ret < 0 {
			return nil, nil
		}
		return nil, err
	}
	if le32(b[level:]) == 0 || le64(b[buf:]) == 0 {
		if c.Ret < 0 {
			return nil, nil
		}
		return whole, nil
	}
	return append(whole, span(le64(b[buf:]), uint64(le32(b[size:])))...), nil
}

// bpfBatchOut: a batch lookup writes the batch cursor (a key), count keys
// and count values, and the count into attr.
func bpfBatchOut(c *Call, m Memory, whole []Range) ([]Range, error) {
	b, err := readFull(m, c.Args[1], 40)
	if err != nil {
		return nil, err
	}
	key, val, err := bpfMapSizes(m, le32(b[36:]))
	if err != nil {
		return nil, err
	}
	n := uint64(le32(b[32:]))
	rs := append(whole, span(le64(b[8:]), key)...)
	rs = append(rs, span(le64(b[16:]), n*key)...)
	return append(rs, span(le64(b[24:]), n*val)...), nil
}

// bpfInfoOut: BPF_OBJ_GET_INFO_BY_FD writes info_len bytes of the object's
// info and the new info_len. A program's info also points to arrays the
// kernel fills (instructions, map ids, line info…), each with its count in
// the info; a link's info may point to names whose layout depends on the
// link type, which rewind does not decode.
func bpfInfoOut(m Memory, attr uint64, whole []Range) ([]Range, error) {
	b, err := readFull(m, attr, 16)
	if err != nil {
		return nil, err
	}
	fd, n, info := le32(b), uint64(le32(b[4:])), le64(b[8:])
	rs := append(whole, span(info, n)...)
	p, ok := m.(Prober)
	if !ok {
		return rs, fmt.Errorf("bpf(BPF_OBJ_GET_INFO_BY_FD): the kind of descriptor %d is unknown here", int32(fd))
	}
	kind, err := p.FdTarget(int(int32(fd)))
	if err != nil {
		return rs, fmt.Errorf("bpf(BPF_OBJ_GET_INFO_BY_FD): descriptor %d: %w", int32(fd), err)
	}
	switch kind {
	case "anon_inode:bpf-map":
		return rs, nil
	case "anon_inode:bpf-prog":
		nested, err := bpfProgArrays(m, info, n)
		return append(rs, nested...), err
	case "anon_inode:btf":
		// btf (u64) and btf_size (u32) at 0 and 8; name and name_len at 16 and 24.
		if n < 28 {
			return rs, nil
		}
		i, err := readFull(m, info, 28)
		if err != nil {
			return rs, err
		}
		rs = append(rs, span(le64(i), uint64(le32(i[8:])))...)
		return append(rs, span(le64(i[16:]), uint64(le32(i[24:]))+1)...), nil
	}
	return rs, fmt.Errorf("bpf(BPF_OBJ_GET_INFO_BY_FD) of %s: rewind does not know what that info points to", kind)
}

// bpfProgArray is one array a struct bpf_prog_info points to: the offset of
// its pointer, of its count, and its element size (a constant, or the
// offset of the field holding the record size).
type bpfProgArray struct {
	ptr, count    uint64
	size, sizeOff uint64
}

var bpfProgInfoArrays = []bpfProgArray{
	{ptr: 24, count: 16, size: 1},        // jited_prog_insns, jited_prog_len
	{ptr: 32, count: 20, size: 1},        // xlated_prog_insns, xlated_prog_len
	{ptr: 56, count: 52, size: 4},        // map_ids, nr_map_ids
	{ptr: 112, count: 104, size: 8},      // jited_ksyms, nr_jited_ksyms
	{ptr: 120, count: 108, size: 4},      // jited_func_lens, nr_jited_func_lens
	{ptr: 136, count: 144, sizeOff: 132}, // func_info, nr_func_info, func_info_rec_size
	{ptr: 152, count: 148, sizeOff: 172}, // line_info, nr_line_info, line_info_rec_size
	{ptr: 160, count: 168, sizeOff: 176}, // jited_line_info, nr_jited_line_info, jited_line_info_rec_size
	{ptr: 184, count: 180, size: 8},      // prog_tags, nr_prog_tags
}

func bpfProgArrays(m Memory, info, n uint64) ([]Range, error) {
	n = min(n, bpfProgInfoSize)
	b, err := readFull(m, info, int(n))
	if err != nil {
		return nil, err
	}
	var rs []Range
	for _, a := range bpfProgInfoArrays {
		if a.ptr+8 > n || a.count+4 > n || a.sizeOff+4 > n {
			continue
		}
		size := a.size
		if size == 0 {
			size = uint64(le32(b[a.sizeOff:]))
		}
		rs = append(rs, span(le64(b[a.ptr:]), uint64(le32(b[a.count:]))*size)...)
	}
	return rs, nil
}

// bpfMapSizes returns the bytes of one key and of one value of map fd as a
// lookup copies them: a per-CPU map's value is one 8-byte aligned value per
// possible CPU.
func bpfMapSizes(m Memory, fd uint32) (key, value uint64, err error) {
	p, ok := m.(Prober)
	if !ok {
		return 0, 0, fmt.Errorf("bpf: the sizes of map %d are unknown here", int32(fd))
	}
	ret, out, err := p.Probe(unix.SYS_BPF, 16+bpfMapInfoSize, func(buf uint64) ([6]uint64, []byte) {
		// union bpf_attr's info: bpf_fd, info_len, info (just after it).
		attr := make([]byte, 16)
		binary.LittleEndian.PutUint32(attr, fd)
		binary.LittleEndian.PutUint32(attr[4:], bpfMapInfoSize)
		binary.LittleEndian.PutUint64(attr[8:], buf+16)
		return [6]uint64{bpfObjGetInfoByFd, buf, 16}, attr
	})
	if err == nil && ret >= 0 && len(out) < 16+bpfMapInfoSize {
		err = fmt.Errorf("short probe")
	}
	if err != nil {
		return 0, 0, fmt.Errorf("bpf: sizes of map %d: %w", int32(fd), err)
	}
	if ret < 0 {
		return 0, 0, fmt.Errorf("bpf: sizes of map %d: %w", int32(fd), unix.Errno(-ret))
	}
	info := out[16:]
	key, value = uint64(le32(info[8:])), uint64(le32(info[12:]))
	switch le32(info) {
	case 5, 6, 10, 21: // PERCPU_HASH, PERCPU_ARRAY, LRU_PERCPU_HASH, PERCPU_CGROUP_STORAGE
		cpus, err := possibleCPUs()
		if err != nil {
			return 0, 0, fmt.Errorf("bpf: per-CPU map %d: %w", int32(fd), err)
		}
		value = (value + 7) / 8 * 8 * uint64(cpus)
	}
	return key, value, nil
}

// possibleCPUs is num_possible_cpus(), from /sys/devices/system/cpu/possible
// ("0-63", or a list of ranges).
var possibleCPUs = sync.OnceValues(func() (int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/possible")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range strings.Split(strings.TrimSpace(string(b)), ",") {
		lo, hi, ok := strings.Cut(r, "-")
		a, err1 := strconv.Atoi(lo)
		z := a
		var err2 error
		if ok {
			z, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || z < a {
			return 0, fmt.Errorf("bad CPU list %q", b)
		}
		n += z - a + 1
	}
	return n, nil
})
