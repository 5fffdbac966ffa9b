package record

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/hook"
	"github.com/rewind-debugger/rewind/engine/machine"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// The cpuid table kept in the cache (CacheDir's cpuid/), by what names
// this CPU and what it offers: the answers of the vendor and feature
// leaves (0, 1, 7, 0x80000000, 0x80000001; leaf 1's APIC id, which names
// the core asking, left out), the kernel's release and the table's
// version. A CPU that answers those the same answers the rest the same,
// but for what describes its topology and caches: a kept table said by
// another core, or another host of one VM, differs there, which changes
// what the program tunes, not what it can run, and a replay answers
// from the trace's table anyway.

// cpuidTableVersion changes when the questions the table asks do.
const cpuidTableVersion = 1

// maxCpuidTables bounds the tables kept (a kernel update makes another).
const maxCpuidTables = 16

// cpuidTableKey names the table of this CPU and kernel, with the features
// hidden from the program.
func cpuidTableKey(hidden machine.Hide) string {
	h := sha256.New()
	var b [4]byte
	put := func(v uint32) {
		binary.LittleEndian.PutUint32(b[:], v)
		h.Write(b[:])
	}
	put(cpuidTableVersion)
	for _, q := range [][2]uint32{{0, 0}, {1, 0}, {7, 0}, {7, 1}, {0x80000000, 0}, {0x80000001, 0}} {
		a, bx, c, d := machine.CPUID(q[0], q[1])
		if q[0] == 1 {
			bx &= 0x00ffffff // the APIC id of the core asking
		}
		put(q[0])
		put(q[1])
		put(a)
		put(bx)
		put(c)
		put(d)
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		h.Write(u.Release[:])
		h.Write(u.Version[:])
	}
	for _, f := range hidden {
		h.Write([]byte(f + ","))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// cpuidTablePath is where the table of key is kept, "" without a cache.
func cpuidTablePath(key string) string {
	dir := trace.CacheDir()
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "cpuid", key+".json")
}

// loadCpuidTable returns the table kept under key, if there is a sound
// one.
func loadCpuidTable(key string) ([]hook.CpuidAnswer, bool) {
	path := cpuidTablePath(key)
	if path == "" {
		return nil, false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	var tab []hook.CpuidAnswer
	if json.Unmarshal(data, &tab) != nil || len(tab) == 0 || len(tab) > hook.CpuidMax || tab[0].Leaf != 0 {
		return nil, false
	}
	return tab, true
}

// saveCpuidTable keeps tab under key. Failures are ignored: the cache
// only saves time.
func saveCpuidTable(key string, tab []hook.CpuidAnswer) {
	path := cpuidTablePath(key)
	if path == "" || len(tab) == 0 {
		return
	}
	data, err := json.Marshal(tab)
	if err != nil || os.MkdirAll(filepath.Dir(path), 0o755) != nil {
		return
	}
	if trace.WriteCacheFile(path, data) == nil {
		trace.TrimCacheFiles(filepath.Dir(path), maxCpuidTables)
	}
}
