package frontend

import (
	"os"
	"path/filepath"
	"testing"
)

// TestClaimName: the first free number, in the directory asked for or in
// $REWIND_TRACE_DIR, never a file that exists.
func TestClaimName(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prog-1.rwd"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	claim := func(abs string) error {
		f, err := os.OpenFile(abs, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			f.Close()
		}
		return err
	}
	got, err := ClaimName(dir, "prog", claim)
	if want := filepath.Join(dir, "prog-2.rwd"); err != nil || got != want {
		t.Errorf("ClaimName = %q, %v, want %q", got, err, want)
	}
	env := t.TempDir()
	t.Setenv(traceDirEnv, env)
	got, err = ClaimName(dir, "prog", claim)
	if want := filepath.Join(env, "prog-1.rwd"); err != nil || got != want {
		t.Errorf("with $%s: ClaimName = %q, %v, want %q", traceDirEnv, got, err, want)
	}
	t.Setenv(traceDirEnv, filepath.Join(dir, "prog-1.rwd"))
	if _, err := ClaimName(dir, "prog", claim); err == nil {
		t.Errorf("$%s naming a file: no error", traceDirEnv)
	}
}

// TestReserveTrace: a relative output is in the program's directory, the
// default is NAME-N.rwd there, and a temporary one goes with its directory.
func TestReserveTrace(t *testing.T) {
	t.Setenv(traceDirEnv, "")
	dir := t.TempDir()
	for _, tt := range []struct {
		o    RecordOptions
		want string
	}{
		{RecordOptions{Dir: dir, Output: "out.rwd"}, filepath.Join(dir, "out.rwd")},
		{RecordOptions{Dir: dir, Output: filepath.Join(dir, "sub", "..", "abs.rwd")}, filepath.Join(dir, "abs.rwd")},
		{RecordOptions{Dir: dir}, filepath.Join(dir, "prog-1.rwd")},
	} {
		p, remove, err := reserveTrace(&tt.o, "prog")
		if err != nil {
			t.Errorf("%+v: %v", tt.o, err)
			continue
		}
		if p.Path() != tt.want {
			t.Errorf("%+v: reserved %s, want %s", tt.o, p.Path(), tt.want)
		}
		p.Discard()
		remove()
	}
	p, remove, err := reserveTrace(&RecordOptions{Dir: dir, TempPattern: "rewind-test-"}, "prog")
	if err != nil {
		t.Fatal(err)
	}
	p.Discard()
	tmp := filepath.Dir(p.Path())
	if filepath.Base(p.Path()) != "prog.rwd" || tmp == dir {
		t.Errorf("temporary trace at %s, want prog.rwd in a directory of its own", p.Path())
	}
	remove()
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("%s still there after remove: %v", tmp, err)
	}
}
