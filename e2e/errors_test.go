package e2e

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestNativeRunsDiffer shows that the test programs really are
// nondeterministic: two native runs give different outputs, so a replay that
// reproduces the recorded output byte for byte proves something.
func TestNativeRunsDiffer(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		src      string
		attempts int
	}{
		{"nondet.c", 1},
		{"threads.c", 10}, // scheduling can, rarely, give the same order twice
	} {
		t.Run(c.src, func(t *testing.T) {
			t.Parallel()
			prog := buildC(t, c.src)
			var outs []string
			for i := 0; i < c.attempts; i++ {
				a, _, codeA := runNative(t, prog)
				b, _, codeB := runNative(t, prog)
				if codeA != 0 || codeB != 0 {
					t.Fatalf("native runs exited %d and %d, want 0", codeA, codeB)
				}
				if !bytes.Equal(a, b) {
					return
				}
				outs = append(outs, string(a))
			}
			t.Fatalf("%d pairs of native runs gave identical output, e.g.:\n%s", c.attempts, outs[0])
		})
	}
}

// badCase is an invalid invocation of rewind.
type badCase struct {
	name string
	args func(t *testing.T, dir string) []string // the rewind arguments
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	cases := []badCase{
		{"record missing program path", func(t *testing.T, dir string) []string {
			return []string{"record", "-o", filepath.Join(dir, "t.rwd"), "--", filepath.Join(dir, "no-such-program")}
		}},
		{"record program not in PATH", func(t *testing.T, dir string) []string {
			return []string{"record", "-o", filepath.Join(dir, "t.rwd"), "--", "rewind-no-such-program-xyz"}
		}},
		{"record text file with exec bit", func(t *testing.T, dir string) []string {
			p := filepath.Join(dir, "notelf")
			writeExec(t, p, []byte("this is not an ELF file\njust text\n"), 0o755)
			return []string{"record", "-o", filepath.Join(dir, "t.rwd"), "--", p}
		}},
		{"record ELF without exec bit", func(t *testing.T, dir string) []string {
			data, err := os.ReadFile(buildC(t, "exit3.c"))
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, "noexec")
			writeExec(t, p, data, 0o644)
			return []string{"record", "-o", filepath.Join(dir, "t.rwd"), "--", p}
		}},
		{"record aarch64 ELF", func(t *testing.T, dir string) []string {
			p := filepath.Join(dir, "arm64prog")
			writeExec(t, p, aarch64Header(t), 0o755)
			return []string{"record", "-o", filepath.Join(dir, "t.rwd"), "--", p}
		}},
		{"record i386 ELF", func(t *testing.T, dir string) []string {
			// A complete 32-bit x86 program (exit(5) through int 0x80) that
			// the kernel runs natively when IA-32 emulation is enabled: its
			// system calls use another ABI, so rewind must refuse it.
			p := filepath.Join(dir, "i386prog")
			writeExec(t, p, i386Program(), 0o755)
			return []string{"record", "-o", filepath.Join(dir, "t.rwd"), "--", p}
		}},
		{"record directory", func(t *testing.T, dir string) []string {
			return []string{"record", "-o", filepath.Join(dir, "t.rwd"), "--", dir}
		}},
		{"replay gdbserver with -ex", func(t *testing.T, dir string) []string {
			return []string{"replay", "--gdbserver", "-", "-ex", "bt", filepath.Join(dir, "t.rwd")}
		}},
		{"replay check with batch", func(t *testing.T, dir string) []string {
			return []string{"replay", "--check", "--batch", filepath.Join(dir, "t.rwd")}
		}},
		{"record duration without -p", func(t *testing.T, dir string) []string {
			return []string{"record", "--duration", "1s", "--", "true"}
		}},
		{"attach not a pid", func(t *testing.T, dir string) []string {
			return []string{"attach", "abc"}
		}},
	}
	for _, cmd := range []string{"replay --check", "info"} {
		argv := strings.Fields(cmd)
		cases = append(cases,
			badCase{cmd + " text file", func(t *testing.T, dir string) []string {
				p := filepath.Join(dir, "notatrace.rwd")
				writeFile(t, p, "this is not a rewind trace\n")
				return append(slices.Clone(argv), p)
			}},
			badCase{cmd + " empty file", func(t *testing.T, dir string) []string {
				p := filepath.Join(dir, "empty.rwd")
				writeFile(t, p, "")
				return append(slices.Clone(argv), p)
			}},
			badCase{cmd + " ELF file", func(t *testing.T, dir string) []string {
				return append(slices.Clone(argv), buildC(t, "exit3.c"))
			}},
			badCase{cmd + " missing file", func(t *testing.T, dir string) []string {
				return append(slices.Clone(argv), filepath.Join(dir, "missing.rwd"))
			}},
		)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bin := rewind(t)
			dir := t.TempDir()
			args := c.args(t, dir)
			r := run(t, runOpts{Dir: dir}, bin, args...)
			checkNoPanic(t, describe("rewind", args), r.Stdout, r.Stderr)
			if r.Code == 0 {
				t.Errorf("exit status 0, want non-zero")
			}
			if ls := lines(r.Stderr); len(ls) != 1 || !strings.HasPrefix(ls[0], "rewind: ") {
				t.Errorf("stderr is %q, want exactly one line starting with \"rewind: \"", r.Stderr)
			}
		})
	}
}

// TestTruncatedTrace cuts a trace to 60% of its size: info says the
// recording did not finish and exits 2, and replay ends (with any status)
// without panicking or hanging. TestIncompleteTraces checks the messages.
func TestTruncatedTrace(t *testing.T) {
	t.Parallel()
	bin := rewind(t)
	data, _ := recordedBytes(t, "nondet.c")
	cut := filepath.Join(t.TempDir(), "cut.rwd")
	if err := os.WriteFile(cut, data[:len(data)*6/10], 0o644); err != nil {
		t.Fatal(err)
	}

	r := run(t, runOpts{}, bin, "info", cut)
	checkNoPanic(t, "rewind info (truncated trace)", r.Stdout, r.Stderr)
	if r.Code != exitPartialTrace {
		t.Errorf("info on a truncated trace exited %d, want %d\nstderr:\n%s", r.Code, exitPartialTrace, tail(r.Stderr))
	}
	warned := regexp.MustCompile(`^rewind: the recording did not finish.*; \d+ events usable\n$`)
	if !warned.Match(r.Stderr) {
		t.Errorf("info on a truncated trace does not say in one line that the recording did not finish\nstderr:\n%s", tail(r.Stderr))
	}

	r = run(t, runOpts{}, bin, "replay", "--check", cut)
	checkNoPanic(t, "rewind replay --check (truncated trace)", r.Stdout, r.Stderr)
	// Any exit status is acceptable; log how it ended.
	last, _ := lastLine(r.Stderr)
	t.Logf("replay --check of the truncated trace exited %d; last stderr line: %q", r.Code, last)
}

// writeExec writes a file with the given mode (chmod'ed explicitly, so the
// umask does not matter).
func writeExec(t *testing.T, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// aarch64Header returns a minimal 64-byte ELF header of an aarch64
// executable (no program headers: the kernel refuses it with ENOEXEC on
// x86-64, and rewind should say it is not an x86-64 program).
func aarch64Header(t *testing.T) []byte {
	var b bytes.Buffer
	b.Write([]byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT), byte(elf.ELFOSABI_NONE)})
	b.Write(make([]byte, 8)) // ABI version and padding
	hdr := struct {
		Type      uint16
		Machine   uint16
		Version   uint32
		Entry     uint64
		Phoff     uint64
		Shoff     uint64
		Flags     uint32
		Ehsize    uint16
		Phentsize uint16
		Phnum     uint16
		Shentsize uint16
		Shnum     uint16
		Shstrndx  uint16
	}{
		Type: uint16(elf.ET_EXEC), Machine: uint16(elf.EM_AARCH64), Version: uint32(elf.EV_CURRENT),
		Entry: 0x400000, Ehsize: 64, Phentsize: 56, Shentsize: 64,
	}
	if err := binary.Write(&b, binary.LittleEndian, hdr); err != nil {
		t.Fatal(err)
	}
	if b.Len() != 64 {
		t.Fatalf("aarch64 header is %d bytes, want 64", b.Len())
	}
	f, err := elf.NewFile(bytes.NewReader(b.Bytes()))
	if err != nil || f.Machine != elf.EM_AARCH64 {
		t.Fatalf("generated aarch64 header does not parse: %v", err)
	}
	return b.Bytes()
}

// i386Program returns a complete static 32-bit x86 ELF executable: one
// PT_LOAD segment whose code is `mov eax,1; mov ebx,5; int 0x80` (exit(5)).
func i386Program() []byte {
	code := []byte{0xb8, 1, 0, 0, 0, 0xbb, 5, 0, 0, 0, 0xcd, 0x80}
	const base, ehsize, phsize = 0x08048000, 52, 32
	total := uint32(ehsize + phsize + len(code))
	var b bytes.Buffer
	b.Write([]byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS32), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT), byte(elf.ELFOSABI_NONE)})
	b.Write(make([]byte, 8))
	le := binary.LittleEndian
	_ = binary.Write(&b, le, []uint16{uint16(elf.ET_EXEC), uint16(elf.EM_386)})
	_ = binary.Write(&b, le, []uint32{uint32(elf.EV_CURRENT), base + ehsize + phsize, ehsize, 0, 0})
	_ = binary.Write(&b, le, []uint16{ehsize, phsize, 1, 0, 0, 0})
	_ = binary.Write(&b, le, []uint32{uint32(elf.PT_LOAD), 0, base, base, total, total, uint32(elf.PF_R | elf.PF_X), 0x1000})
	b.Write(code)
	return b.Bytes()
}
