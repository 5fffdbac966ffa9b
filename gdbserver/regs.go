package gdbserver

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// regSource is what the register file is read from: the general registers,
// the FXSAVE area and (for the AVX upper halves) the XSAVE area of a thread.
type regSource struct {
	gp    trace.Regs
	fx    []byte // 512 bytes, or nil when unreadable
	xsave []byte // nil when unreadable or without AVX
}

// register is one register of the target description: its name, size in
// bytes, and how its bytes come out of a regSource.
type register struct {
	name    string
	size    int
	typ     string
	group   string
	value   func(src *regSource) []byte
	feature string // the target description feature it belongs to
}

const (
	featCore  = "org.gnu.gdb.i386.core"
	featSSE   = "org.gnu.gdb.i386.sse"
	featLinux = "org.gnu.gdb.i386.linux"
	featSeg   = "org.gnu.gdb.i386.segments"
	featAVX   = "org.gnu.gdb.i386.avx"
)

// xsaveAVXOffset is where the upper halves of ymm0-15 are in the standard
// XSAVE layout; bit 2 of XSTATE_BV (offset 512) says they are not zero.
const xsaveAVXOffset = 576

// gp gives a general register, truncated to size bytes.
func gp(i, size int) func(*regSource) []byte {
	return func(src *regSource) []byte {
		return binary.LittleEndian.AppendUint64(nil, src.gp[i])[:size]
	}
}

// fxBytes gives n bytes of the FXSAVE area at off (zeros when unreadable).
func fxBytes(off, n int) func(*regSource) []byte {
	return func(src *regSource) []byte {
		out := make([]byte, n)
		if len(src.fx) >= off+n {
			copy(out, src.fx[off:off+n])
		}
		return out
	}
}

// fxWord gives a 16-bit field of the FXSAVE area as gdb's 32-bit register,
// masked (fop has 11 bits).
func fxWord(off int, mask uint32) func(*regSource) []byte {
	return func(src *regSource) []byte {
		var v uint32
		if len(src.fx) >= off+2 {
			v = uint32(binary.LittleEndian.Uint16(src.fx[off:])) & mask
		}
		return binary.LittleEndian.AppendUint32(nil, v)
	}
}

// ftag expands FXSAVE's abridged tag byte (one bit a physical register:
// empty or not) into the x87 tag word gdb shows (two bits: valid, zero,
// special, empty), from the registers' contents as the FPU would.
func ftag(src *regSource) []byte {
	if len(src.fx) < 160 {
		return make([]byte, 4)
	}
	abridged := src.fx[4]
	top := int(binary.LittleEndian.Uint16(src.fx[2:])>>11) & 7
	var word uint32
	for phys := range 8 {
		tag := uint32(3) // empty
		if abridged&(1<<phys) != 0 {
			st := (phys - top + 8) % 8
			reg := src.fx[32+16*st : 32+16*st+10]
			exp := binary.LittleEndian.Uint16(reg[8:]) & 0x7fff
			mant := binary.LittleEndian.Uint64(reg[:8])
			switch {
			case exp == 0x7fff:
				tag = 2
			case exp == 0 && mant == 0:
				tag = 1
			case exp == 0 || mant>>63 == 0:
				tag = 2
			default:
				tag = 0
			}
		}
		word |= tag << (2 * phys)
	}
	return binary.LittleEndian.AppendUint32(nil, word)
}

// ymmHigh gives the upper 128 bits of ymm i.
func ymmHigh(i int) func(*regSource) []byte {
	return func(src *regSource) []byte {
		out := make([]byte, 16)
		off := xsaveAVXOffset + 16*i
		if len(src.xsave) >= off+16 && src.xsave[512]&4 != 0 {
			copy(out, src.xsave[off:off+16])
		}
		return out
	}
}

// registers returns the register file in the order of the 'g' packet and
// of the regnums of the target description: amd64 Linux as gdb numbers it
// (core, sse, orig_rax, fs_base/gs_base, then the ymm upper halves when
// avx is set).
func registers(avx bool) []register {
	var rs []register
	add := func(feat, name string, size int, typ, group string, v func(*regSource) []byte) {
		rs = append(rs, register{name: name, size: size, typ: typ, group: group, value: v, feature: feat})
	}
	for _, r := range []struct {
		name string
		i    int
		typ  string
	}{
		{"rax", trace.RAX, "int64"}, {"rbx", trace.RBX, "int64"}, {"rcx", trace.RCX, "int64"},
		{"rdx", trace.RDX, "int64"}, {"rsi", trace.RSI, "int64"}, {"rdi", trace.RDI, "int64"},
		{"rbp", trace.RBP, "data_ptr"}, {"rsp", trace.RSP, "data_ptr"},
		{"r8", trace.R8, "int64"}, {"r9", trace.R9, "int64"}, {"r10", trace.R10, "int64"},
		{"r11", trace.R11, "int64"}, {"r12", trace.R12, "int64"}, {"r13", trace.R13, "int64"},
		{"r14", trace.R14, "int64"}, {"r15", trace.R15, "int64"}, {"rip", trace.RIP, "code_ptr"},
	} {
		add(featCore, r.name, 8, r.typ, "", gp(r.i, 8))
	}
	add(featCore, "eflags", 4, "i386_eflags", "", gp(trace.EFLAGS, 4))
	for _, r := range []struct {
		name string
		i    int
	}{{"cs", trace.CS}, {"ss", trace.SS}, {"ds", trace.DS}, {"es", trace.ES}, {"fs", trace.FS}, {"gs", trace.GS}} {
		add(featCore, r.name, 4, "int32", "", gp(r.i, 4))
	}
	for i := range 8 {
		add(featCore, fmt.Sprintf("st%d", i), 10, "i387_ext", "", fxBytes(32+16*i, 10))
	}
	add(featCore, "fctrl", 4, "int", "float", fxWord(0, 0xffff))
	add(featCore, "fstat", 4, "int", "float", fxWord(2, 0xffff))
	add(featCore, "ftag", 4, "int", "float", ftag)
	add(featCore, "fiseg", 4, "int", "float", fxWord(12, 0xffff))
	add(featCore, "fioff", 4, "int", "float", fxBytes(8, 4))
	add(featCore, "foseg", 4, "int", "float", fxWord(20, 0xffff))
	add(featCore, "fooff", 4, "int", "float", fxBytes(16, 4))
	add(featCore, "fop", 4, "int", "float", fxWord(6, 0x7ff))
	for i := range 16 {
		add(featSSE, fmt.Sprintf("xmm%d", i), 16, "vec128", "vector", fxBytes(160+16*i, 16))
	}
	add(featSSE, "mxcsr", 4, "i386_mxcsr", "vector", fxBytes(24, 4))
	add(featLinux, "orig_rax", 8, "int", "system", gp(trace.OrigRAX, 8))
	add(featSeg, "fs_base", 8, "int", "", gp(trace.FSBase, 8))
	add(featSeg, "gs_base", 8, "int", "", gp(trace.GSBase, 8))
	if avx {
		for i := range 16 {
			add(featAVX, fmt.Sprintf("ymm%dh", i), 16, "uint128", "", ymmHigh(i))
		}
	}
	return rs
}

// flagBit is a one-bit field of a flags register.
type flagBit struct {
	name string
	bit  int
}

// flagsXML describes a 32-bit flags register by its one-bit fields, two
// on a line.
func flagsXML(id string, bits []flagBit) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<flags id=\"%s\" size=\"4\">", id)
	for i, f := range bits {
		if i%2 == 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, `<field name="%s" start="%d" end="%d"/>`, f.name, f.bit, f.bit)
	}
	b.WriteString("\n</flags>\n")
	return b.String()
}

// targetXML is the target description gdb reads with
// qXfer:features:read:target.xml: one document with every feature, the
// regnums matching registers(avx).
func targetXML(avx bool) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0"?>
<!DOCTYPE target SYSTEM "gdb-target.dtd">
<target version="1.0">
<architecture>i386:x86-64</architecture>
<osabi>GNU/Linux</osabi>
`)
	types := map[string]string{
		featCore: flagsXML("i386_eflags", []flagBit{{"CF", 0}, {"", 1}, {"PF", 2}, {"AF", 4}, {"ZF", 6}, {"SF", 7},
			{"TF", 8}, {"IF", 9}, {"DF", 10}, {"OF", 11}, {"NT", 14}, {"RF", 16}, {"VM", 17}, {"AC", 18},
			{"VIF", 19}, {"VIP", 20}, {"ID", 21}}),
		featSSE: `<vector id="v4f" type="ieee_single" count="4"/>
<vector id="v2d" type="ieee_double" count="2"/>
<vector id="v16i8" type="int8" count="16"/>
<vector id="v8i16" type="int16" count="8"/>
<vector id="v4i32" type="int32" count="4"/>
<vector id="v2i64" type="int64" count="2"/>
<union id="vec128">
<field name="v4_float" type="v4f"/><field name="v2_double" type="v2d"/>
<field name="v16_int8" type="v16i8"/><field name="v8_int16" type="v8i16"/>
<field name="v4_int32" type="v4i32"/><field name="v2_int64" type="v2i64"/>
<field name="uint128" type="uint128"/>
</union>
` + flagsXML("i386_mxcsr", []flagBit{{"IE", 0}, {"DE", 1}, {"ZE", 2}, {"OE", 3}, {"UE", 4}, {"PE", 5},
			{"DAZ", 6}, {"IM", 7}, {"DM", 8}, {"ZM", 9}, {"OM", 10}, {"UM", 11}, {"PM", 12}, {"FZ", 15}}),
	}
	feat := ""
	for i, r := range registers(avx) {
		if r.feature != feat {
			if feat != "" {
				b.WriteString("</feature>\n")
			}
			feat = r.feature
			fmt.Fprintf(&b, "<feature name=\"%s\">\n%s", feat, types[feat])
		}
		fmt.Fprintf(&b, `<reg name="%s" bitsize="%d" type="%s" regnum="%d"`, r.name, r.size*8, r.typ, i)
		if r.group != "" {
			fmt.Fprintf(&b, ` group="%s"`, r.group)
		}
		b.WriteString("/>\n")
	}
	b.WriteString("</feature>\n</target>\n")
	return b.String()
}
