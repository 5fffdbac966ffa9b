package keymaps

import (
	"strings"
	"testing"
)

func TestPresets(t *testing.T) {
	for _, p := range Presets() {
		k, err := New(p, nil)
		if err != nil {
			t.Fatalf("preset %s: %v", p, err)
		}
		for _, a := range Actions {
			if len(k.Get(a).Keys()) == 0 {
				t.Errorf("preset %s: no key for %s", p, a)
			}
		}
	}
	k, _ := New("default", nil)
	for key, a := range map[string]Action{"s": Step, "n": Next, "f": Finish, "c": Continue, "S": ReverseStep,
		"N": ReverseNext, "F": ReverseFinish, "C": ReverseCont, "i": StepI, "I": ReverseStepI, "b": Break, "w": Watch,
		"?": Help, ":": Prompt, "q": Quit, "tab": FocusNext} {
		if !k.Matches(key, a) {
			t.Errorf("default: %q is not %s", key, a)
		}
	}
	v, _ := New("vim", nil)
	if !v.Matches("j", Down) || !v.Matches("G", Bottom) || !v.Matches("ctrl+d", PageDown) {
		t.Error("vim preset lacks j/G/ctrl+d")
	}
	e, _ := New("emacs", nil)
	if !e.Matches("ctrl+n", Down) || !e.Matches("f8", Next) || !e.Matches("shift+f8", ReverseNext) {
		t.Error("emacs preset lacks ctrl+n/f8/shift+f8")
	}
}

func TestOverrides(t *testing.T) {
	k, err := New("default", map[string][]string{"step": {"f7"}, "next": {"f8", "n"}})
	if err != nil {
		t.Fatal(err)
	}
	if !k.Matches("f7", Step) || k.Matches("s", Step) || !k.Matches("f8", Next) {
		t.Error("overrides not applied")
	}
	for _, c := range []struct {
		preset string
		over   map[string][]string
		want   string
	}{
		{"nano", nil, `unknown key preset "nano"`},
		{"default", map[string][]string{"stepp": {"x"}}, `unknown key action "stepp"`},
		{"default", map[string][]string{"step": {}}, `has no keys`},
		{"default", map[string][]string{"step": {" "}}, `empty key`},
		{"default", map[string][]string{"step": {"n"}}, `bound to both`},
	} {
		if _, err := New(c.preset, c.over); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v, want %q", c.preset, c.over, err, c.want)
		}
	}
}
