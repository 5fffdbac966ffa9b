package dwarf

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
)

// This file finds the thread-local storage block of a module in a thread,
// for DW_OP_form_tls_address: the executable's by its fixed place below the
// thread pointer, a shared library's through glibc's dynamic thread vector,
// located as libthread_db (and so gdb) does it, with the layout
// descriptors libc exports for that purpose.

// StaticTLSBlock returns the address of the main executable's TLS block
// in the thread whose fs_base is fsBase. The executable is TLS module 1,
// placed by glibc (x86-64 TLS variant II) just below the thread pointer at
// an offset rounded to the segment's alignment. Shared libraries' blocks
// depend on the dynamic loader's state and are not computed here.
func (img *Image) StaticTLSBlock(fsBase uint64) (uint64, error) {
	exec := img.file.Type == elf.ET_EXEC
	for _, p := range img.file.Progs {
		exec = exec || p.Type == elf.PT_INTERP
	}
	tls := img.tlsSegment()
	if tls == nil {
		return 0, fmt.Errorf("%s has no TLS segment", img.Path)
	}
	if !exec {
		return 0, fmt.Errorf("%s is a shared library: its TLS block is not at a fixed offset", img.Path)
	}
	align := tls.Align
	if align == 0 {
		align = 1
	}
	// glibc's _dl_determine_tlsoffset: the block ends at the thread
	// pointer, its start aligned so that p_vaddr's misalignment is kept.
	firstbyte := (-tls.Vaddr) & (align - 1)
	off := (tls.Memsz-firstbyte+align-1)/align*align + firstbyte
	return fsBase - off, nil
}

// tlsDescriptor is one of the _thread_db_* descriptors libc exports for
// libthread_db: the size of a field in bits, the number of elements (for
// arrays) and its offset in the structure. They describe the layout of
// glibc's private structures, which changes between versions.
type tlsDescriptor struct{ bits, count, offset uint32 }

// The public layout of <link.h> and glibc's marks, and bounds on what a
// damaged link_map list or dtv can make us read.
const (
	maxLinkMaps     = 4096
	tlsUnallocated  = ^uint64(0) // glibc's TLS_DTV_UNALLOCATED
	linkMapNext     = 24         // struct link_map's l_next (public ABI, <link.h>)
	rDebugMap       = 8          // struct r_debug's r_map (<link.h>)
	maxDTVEntrySize = 64         // bytes
)

// TLSBlock returns the address of img's TLS block in the thread whose
// thread pointer (fs_base) is tp. The executable's block is at a fixed
// offset from tp. A library's is found as libthread_db's
// td_thr_tls_get_addr finds it: the library's link_map in the loader's
// list (_r_debug.r_map) gives its module id, and the thread's dynamic
// thread vector (struct pthread's dtv) the block of that module. libc's
// _thread_db_* descriptors give the private offsets, so no debug
// information of the loader is needed.
func (t *Table) TLSBlock(img *Image, tp uint64, mem Memory) (uint64, error) {
	if len(t.Images) > 0 && img == t.Images[0] {
		return img.StaticTLSBlock(tp)
	}
	if img.tlsSegment() == nil {
		return 0, fmt.Errorf("%s has no TLS segment", img.Path)
	}
	desc := func(name string) (tlsDescriptor, error) {
		s, ok := t.Lookup("_thread_db_" + name)
		if !ok {
			return tlsDescriptor{}, fmt.Errorf("libc's _thread_db_%s not found (thread-local variables of libraries need glibc)", name)
		}
		var b [12]byte
		if _, err := mem.ReadAt(b[:], s.Addr); err != nil {
			return tlsDescriptor{}, fmt.Errorf("reading _thread_db_%s: %w", name, err)
		}
		d := tlsDescriptor{binary.LittleEndian.Uint32(b[0:]), binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[8:])}
		if d.bits != 64 && name != "dtv_dtv" {
			return d, fmt.Errorf("libc's _thread_db_%s describes a %d-bit field, want 64", name, d.bits)
		}
		return d, nil
	}
	modidDesc, err := desc("link_map_l_tls_modid")
	if err != nil {
		return 0, err
	}
	dtvpDesc, err := desc("pthread_dtvp")
	if err != nil {
		return 0, err
	}
	dtvDesc, err := desc("dtv_dtv")
	if err != nil {
		return 0, err
	}
	valDesc, err := desc("dtv_t_pointer_val")
	if err != nil {
		return 0, err
	}
	entrySize := uint64(dtvDesc.bits / 8)
	if entrySize == 0 || entrySize > maxDTVEntrySize {
		return 0, fmt.Errorf("libc's _thread_db_dtv_dtv gives dtv entries of %d bits", dtvDesc.bits)
	}
	lm, err := t.linkMap(img, mem)
	if err != nil {
		return 0, err
	}
	modid, err := readU64(mem, lm+uint64(modidDesc.offset))
	if err != nil {
		return 0, fmt.Errorf("reading the module id of %s: %w", img.Path, err)
	}
	if modid == 0 {
		return 0, fmt.Errorf("%s has no TLS module id", img.Path)
	}
	dtv, err := readU64(mem, tp+uint64(dtvpDesc.offset))
	if err != nil {
		return 0, fmt.Errorf("reading the thread's dtv: %w", err)
	}
	// dtv[-1] holds the vector's length: a module loaded after the thread
	// last updated its vector is not in it yet.
	if n, err := readU64(mem, dtv-entrySize); err == nil && modid > n {
		return 0, fmt.Errorf("the TLS block of %s is not allocated in this thread yet", img.Path)
	}
	block, err := readU64(mem, dtv+modid*entrySize+uint64(valDesc.offset))
	if err != nil {
		return 0, fmt.Errorf("reading dtv[%d]: %w", modid, err)
	}
	if block == 0 || block == tlsUnallocated {
		return 0, fmt.Errorf("the TLS block of %s is not allocated in this thread yet", img.Path)
	}
	return block, nil
}

// linkMap finds img's entry in the dynamic loader's list of loaded objects:
// the one whose l_addr is img's load bias.
func (t *Table) linkMap(img *Image, mem Memory) (uint64, error) {
	rd, ok := t.Lookup("_r_debug")
	if !ok {
		return 0, errors.New("the dynamic loader's _r_debug not found")
	}
	lm, err := readU64(mem, rd.Addr+rDebugMap)
	if err != nil {
		return 0, fmt.Errorf("reading _r_debug.r_map: %w", err)
	}
	for i := 0; lm != 0 && i < maxLinkMaps; i++ {
		addr, err := readU64(mem, lm)
		if err != nil {
			return 0, fmt.Errorf("reading link_map at %#x: %w", lm, err)
		}
		if addr == img.Bias && addr != 0 {
			return lm, nil
		}
		if lm, err = readU64(mem, lm+linkMapNext); err != nil {
			return 0, fmt.Errorf("reading link_map.l_next: %w", err)
		}
	}
	return 0, fmt.Errorf("%s is not in the dynamic loader's list of loaded objects", img.Path)
}

// tlsSegment is the image's PT_TLS segment, nil when it has none.
func (img *Image) tlsSegment() *elf.Prog {
	for _, p := range img.file.Progs {
		if p.Type == elf.PT_TLS {
			return p
		}
	}
	return nil
}
