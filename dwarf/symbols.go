// Package dwarf turns addresses into the program the user wrote: ELF
// symbols of the executable and its shared libraries, separate debug files,
// line tables, call-frame unwinding, functions with their inlined calls,
// variables, types and values, demangled names and disassembly.
//
// It knows nothing about ptrace or the engine: the debugger hands it the
// process's mappings, registers and a Memory to read.
package dwarf

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/ianlancetaylor/demangle"
)

// Symbol is a function or object symbol at its run-time address.
type Symbol struct {
	Name  string // demangled
	Raw   string // as in the symbol table
	Addr  uint64
	Size  uint64
	Func  bool
	Image string // the ELF file it comes from
}

// Image is one loaded ELF file: its symbols and, when present, its DWARF
// (from the file itself or from a separate debug file).
type Image struct {
	Path string
	// DebugPath is the file the DWARF comes from (Path, a build-id debug
	// file, or "" when there is none).
	DebugPath string
	// DebugPacked says the debug file came from the recording (rewind
	// pack), not from this machine.
	DebugPacked bool
	// Recorded says the file itself is the recording's copy: the file at
	// Path here is another, or is gone (a recording made elsewhere).
	Recorded bool
	Bias     uint64 // run-time address minus link-time address
	symbols  []Symbol
	byName   map[string]int
	file     *elf.File
	debug    *elf.File

	dwOnce sync.Once
	dw     *dwarf.Data
	dwErr  error

	// Parts built lazily by lines.go, funcs.go, unwind.go and types.go.
	linesOnce sync.Once
	lines     *lineTable
	funcsOnce sync.Once
	funcs     *funcIndex
	// The call sites entry values were found at, by return address
	// (entryvalue.go).
	callSitesMu sync.Mutex
	callSites   map[uint64]foundCallSite
	// The inlined instances of inlined.go.
	inlinedOnce sync.Once
	inlined     *inlinedIndex
	cfiOnce     sync.Once
	cfi         *cfiTables
	typesMu     sync.Mutex
	types       map[uint64]*Type
	// The index of variables with static storage of vars.go.
	globalsOnce sync.Once
	globalsIdx  *globalIndex
	// sections caches Section.
	sectMu   sync.Mutex
	sections map[string][]byte
	// The type index of types.go.
	typeIdxOnce sync.Once
	typeIdx     *typeIndex
	typeIdxErr  error
}

// DebugRoots are the directories searched for separate debug files, as gdb's
// debug-file-directory. Tests may change it.
var DebugRoots = []string{"/usr/lib/debug"}

// LoadImage reads the ELF file at path, loaded so that file offset 0 is at
// base (the start of its first mapping). The file stays open for lazy reads
// of its DWARF until Close.
func LoadImage(path string, base uint64) (*Image, error) {
	return LoadImageWith(path, nil, base, nil)
}

// DebugLookup finds the separate debug file of an image when this machine
// has none: a recording may carry it. It gets the image's path and its
// build-id in hex ("" when it has none) and returns the debug file's bytes
// and the path it had.
type DebugLookup func(image, buildID string) (data []byte, path string, ok bool)

// LoadImageWith is LoadImage for the contents r of the file that was at
// path (nil: read path), asking packed for the separate debug file when
// the local lookup finds none (nil: do not ask).
func LoadImageWith(path string, r io.ReaderAt, base uint64, packed DebugLookup) (*Image, error) {
	var f *elf.File
	var err error
	if r == nil {
		f, err = elf.Open(path)
	} else {
		f, err = elf.NewFile(r)
	}
	if err != nil {
		return nil, fmt.Errorf("symbols of %s: %w", path, err)
	}
	img, err := loadImage(path, f, base, packed)
	if err != nil {
		f.Close()
	}
	return img, err
}

// LoadImageFrom is LoadImage for the contents of the file that was at path
// (a recording keeps executables that are gone since).
func LoadImageFrom(path string, r io.ReaderAt, base uint64) (*Image, error) {
	return LoadImageWith(path, r, base, nil)
}

// linkBase is where the file's first byte sits at link time, as the
// first PT_LOAD places it; false without one.
func linkBase(f *elf.File) (uint64, bool) {
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			return p.Vaddr - p.Off, true
		}
	}
	return 0, false
}

func loadImage(path string, f *elf.File, base uint64, packed DebugLookup) (*Image, error) {
	img := &Image{Path: path, file: f, byName: map[string]int{}}
	// The bias maps link addresses to run-time ones: for a PIE or a shared
	// library the first PT_LOAD links at vaddr and runs at base.
	if link, ok := linkBase(f); ok && f.Type == elf.ET_DYN {
		img.Bias = base - link
	}
	img.debug = f
	if f.Section(".debug_info") == nil {
		img.debug = nil
		if dp := findDebugFile(f, path); dp != "" {
			if df, err := elf.Open(dp); err == nil {
				img.debug, img.DebugPath = df, dp
			}
		}
		if img.debug == nil && packed != nil {
			if data, dp, ok := packed(path, hex.EncodeToString(buildID(f))); ok {
				if df, err := elf.NewFile(bytes.NewReader(data)); err == nil {
					img.debug, img.DebugPath, img.DebugPacked = df, dp, true
				}
			}
		}
	} else {
		img.DebugPath = path
	}
	add := func(from *elf.File, syms []elf.Symbol) {
		for _, s := range syms {
			typ := elf.ST_TYPE(s.Info)
			if typ == elf.STT_NOTYPE && s.Value != 0 && s.Name != "" && int(s.Section) > 0 && int(s.Section) < len(from.Sections) &&
				from.Sections[s.Section].Flags&elf.SHF_EXECINSTR != 0 {
				// Labels of hand-written assembly (ld.so's _start): gdb
				// names code with them too.
				typ = elf.STT_FUNC
			}
			if s.Value == 0 || s.Name == "" || (typ != elf.STT_FUNC && typ != elf.STT_OBJECT && typ != elf.STT_GNU_IFUNC && typ != elf.STT_TLS) {
				continue
			}
			addr := s.Value + img.Bias
			if typ == elf.STT_TLS {
				addr = s.Value // an offset into the TLS block, not an address
			}
			img.symbols = append(img.symbols, Symbol{Name: Demangle(s.Name), Raw: s.Name, Addr: addr, Size: s.Size,
				Func: typ == elf.STT_FUNC || typ == elf.STT_GNU_IFUNC, Image: path})
		}
	}
	if syms, err := f.Symbols(); err == nil {
		add(f, syms)
	}
	if f.Section(".symtab") == nil && img.debug != nil && img.debug != f {
		// Stripped file: the debug file keeps the full symbol table.
		if syms, err := img.debug.Symbols(); err == nil {
			add(img.debug, syms)
		}
	}
	if syms, err := f.DynamicSymbols(); err == nil {
		add(f, syms)
	}
	sort.SliceStable(img.symbols, func(i, j int) bool { return img.symbols[i].Addr < img.symbols[j].Addr })
	for i := len(img.symbols) - 1; i >= 0; i-- {
		s := img.symbols[i]
		img.byName[s.Raw] = i
		img.byName[s.Name] = i
		if k := strings.IndexByte(s.Name, '('); k > 0 { // "ns::fn<int>(int, int)" is also "ns::fn<int>"
			if _, ok := img.byName[s.Name[:k]]; !ok {
				img.byName[s.Name[:k]] = i
			}
		}
	}
	return img, nil
}

// findDebugFile looks for the separate debug file of f the way gdb does: by
// build-id under .build-id/, then by .gnu_debuglink next to the file, in
// its .debug directory and under the debug roots.
func findDebugFile(f *elf.File, path string) string {
	if id := buildID(f); len(id) > 1 {
		h := hex.EncodeToString(id)
		for _, root := range DebugRoots {
			p := filepath.Join(root, ".build-id", h[:2], h[2:]+".debug")
			if fileExists(p) {
				return p
			}
		}
	}
	if sec := f.Section(".gnu_debuglink"); sec != nil {
		if data, err := sec.Data(); err == nil {
			name := string(data)
			if i := strings.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if name != "" {
				dir := filepath.Dir(path)
				if real, err := filepath.EvalSymlinks(path); err == nil {
					dir = filepath.Dir(real)
				}
				cands := []string{filepath.Join(dir, name), filepath.Join(dir, ".debug", name)}
				for _, root := range DebugRoots {
					cands = append(cands, filepath.Join(root, dir, name))
				}
				for _, p := range cands {
					if p != path && fileExists(p) {
						return p
					}
				}
			}
		}
	}
	return ""
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// buildID returns the GNU build-id note of f.
func buildID(f *elf.File) []byte {
	sec := f.Section(".note.gnu.build-id")
	if sec == nil {
		return nil
	}
	data, err := sec.Data()
	if err != nil || len(data) < 16 {
		return nil
	}
	namesz := f.ByteOrder.Uint32(data[0:])
	descsz := f.ByteOrder.Uint32(data[4:])
	off := 12 + (namesz+3)&^3
	if uint64(off)+uint64(descsz) > uint64(len(data)) {
		return nil
	}
	return data[off : off+descsz]
}

// Close releases the files of the image.
func (img *Image) Close() {
	if img.debug != nil && img.debug != img.file {
		img.debug.Close()
	}
	img.file.Close()
}

// DWARF returns the image's debug information, or an error when it has
// none.
func (img *Image) DWARF() (*dwarf.Data, error) {
	img.dwOnce.Do(func() {
		if img.debug == nil {
			img.dwErr = fmt.Errorf("%s has no debug information", img.Path)
			return
		}
		img.dw, img.dwErr = img.debug.DWARF()
		if img.dwErr != nil {
			img.dwErr = fmt.Errorf("debug information of %s: %w", img.DebugPath, img.dwErr)
		}
	})
	return img.dw, img.dwErr
}

// Section returns the contents of a section (decompressed), from the debug
// file first and then from the image itself; nil when absent. Sections are
// kept once read: debug files compress them, and variables, location
// lists and units are read from them at every stop.
func (img *Image) Section(name string) []byte {
	img.sectMu.Lock()
	defer img.sectMu.Unlock()
	if data, ok := img.sections[name]; ok {
		return data
	}
	var out []byte
	for _, f := range []*elf.File{img.debug, img.file} {
		if f == nil {
			continue
		}
		if s := f.Section(name); s != nil && s.Type != elf.SHT_NOBITS {
			if data, err := s.Data(); err == nil {
				out = data
				break
			}
		}
	}
	if img.sections == nil {
		img.sections = map[string][]byte{}
	}
	img.sections[name] = out
	return out
}

// SectionAddr returns the link-time address of a section of the image
// itself (not of the debug file), 0 when absent.
func (img *Image) SectionAddr(name string) uint64 {
	if s := img.file.Section(name); s != nil {
		return s.Addr
	}
	return 0
}

// Contains says whether a run-time address falls into one of the image's
// loaded segments.
func (img *Image) Contains(addr uint64) bool {
	for _, p := range img.file.Progs {
		if p.Type == elf.PT_LOAD && addr >= p.Vaddr+img.Bias && addr < p.Vaddr+img.Bias+p.Memsz {
			return true
		}
	}
	return false
}

// Lookup finds a symbol by raw or demangled name (a C++ name may omit its
// parameter list).
func (img *Image) Lookup(name string) (Symbol, bool) {
	if i, ok := img.byName[name]; ok {
		return img.symbols[i], true
	}
	return Symbol{}, false
}

// At returns the symbol containing addr.
func (img *Image) At(addr uint64) (Symbol, bool) {
	i := sort.Search(len(img.symbols), func(i int) bool { return img.symbols[i].Addr > addr }) - 1
	for ; i >= 0; i-- {
		s := img.symbols[i]
		if addr >= s.Addr && (addr < s.Addr+s.Size || (s.Size == 0 && addr-s.Addr < 4096)) {
			return s, true
		}
		if s.Size > 0 && addr >= s.Addr+s.Size && s.Func {
			break
		}
	}
	return Symbol{}, false
}

// Symbols returns the image's symbols sorted by address.
func (img *Image) Symbols() []Symbol { return img.symbols }

// Demangle turns a C++ or Rust (legacy or v0) symbol name into the source
// form; other names are returned unchanged.
func Demangle(name string) string {
	if !strings.HasPrefix(name, "_Z") && !strings.HasPrefix(name, "_R") && !strings.HasPrefix(name, "__Z") {
		return name
	}
	out, err := demangle.ToString(name, demangle.NoClones)
	if err != nil {
		return name
	}
	// Template functions demangle with their return type first ("int
	// ns::fn<int>(int, int)"); gdb shows them without it.
	if bare, err := demangle.ToString(name, demangle.NoClones, demangle.NoParams); err == nil && bare != "" {
		if i := strings.Index(out, bare); i > 0 {
			out = out[i:]
		}
	}
	// Rust legacy names end in a hash ("::h0123456789abcdef") that nobody
	// types; drop it.
	if i := strings.LastIndex(out, "::h"); i > 0 && len(out)-i == 19 && isHex(out[i+3:]) {
		out = out[:i]
	}
	return out
}

func isHex(s string) bool {
	for _, c := range []byte(s) {
		if !bytes.ContainsRune([]byte("0123456789abcdef"), rune(c)) {
			return false
		}
	}
	return true
}

// Table is the images of a process, the executable first.
type Table struct {
	Images []*Image
}

// Lookup finds a symbol by name in any image, the executable first.
func (t *Table) Lookup(name string) (Symbol, bool) {
	for _, img := range t.Images {
		if s, ok := img.Lookup(name); ok {
			return s, true
		}
	}
	return Symbol{}, false
}

// LookupAll finds a symbol by name in each image that has one, the
// executable first: a function the dynamic loader and libc both define
// (opendir) is two places to stop, as in gdb.
func (t *Table) LookupAll(name string) []Symbol {
	var out []Symbol
	for _, img := range t.Images {
		if s, ok := img.Lookup(name); ok {
			out = append(out, s)
		}
	}
	return out
}

// At returns the symbol containing addr and the offset into it.
func (t *Table) At(addr uint64) (Symbol, uint64, bool) {
	for _, img := range t.Images {
		if s, ok := img.At(addr); ok {
			return s, addr - s.Addr, true
		}
	}
	return Symbol{}, 0, false
}

// SymbolAt names addr as gdb's <sym+off> does: code by the function the
// debug information puts there (libc's write is __GI___libc_write, as in
// backtraces), anything else by its ELF symbol. ok is false for an address
// outside every symbol's extent (a sizeless symbol such as _end names only
// its own address).
func (t *Table) SymbolAt(addr uint64) (name string, off uint64, ok bool) {
	s, off, ok := t.At(addr)
	if ok && off >= s.Size && off != 0 {
		ok = false
	}
	if !ok || s.Func {
		if fn := t.FunctionAt(addr); fn != nil && addr >= fn.Low && addr < fn.High {
			return fn.Name, addr - fn.Low, true
		}
	}
	if !ok {
		return "", 0, false
	}
	name = s.Name
	// gcc names a function's static "o" as "o.0" in the symbol table; gdb
	// shows the variable's own name from the debug information.
	if i := strings.LastIndexByte(name, '.'); i > 0 && i < len(name)-1 && strings.Trim(name[i+1:], "0123456789") == "" {
		name = name[:i]
	}
	return name, off, true
}

// ImageAt returns the image whose segments contain addr.
func (t *Table) ImageAt(addr uint64) *Image {
	for _, img := range t.Images {
		if img.Contains(addr) {
			return img
		}
	}
	return nil
}

// Close releases every image.
func (t *Table) Close() {
	for _, img := range t.Images {
		img.Close()
	}
}
