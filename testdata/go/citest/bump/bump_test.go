// Package bump is a test package that crashes: bump dereferences the nil
// entry a missing key gives.
package bump

import "testing"

type entry struct{ hits int }

type cache struct{ entries map[string]*entry }

//go:noinline
func (c *cache) bump(k string) {
	c.entries[k].hits++ // nil for a key never added
}

func TestBump(t *testing.T) {
	c := &cache{entries: map[string]*entry{"a": {}}}
	c.bump("a")
	c.bump("b")
}
