package ui

import (
	"slices"
	"testing"

	"github.com/rewind-debugger/rewind/debugger"
)

// TestPromptCompletions: the prompt completes every command of the
// registry, each info subcommand, and the UI's own commands.
func TestPromptCompletions(t *testing.T) {
	got := promptCompletions()
	var want []string
	for _, c := range debugger.Commands().Commands() {
		want = append(want, c.Name)
		if c.Sub != nil {
			for _, sc := range c.Sub.Commands() {
				want = append(want, c.Name+" "+sc.Name)
			}
		}
	}
	want = append(want, uiCommands...)
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("the prompt does not complete %q", w)
		}
	}
}
