package mcpserver

import (
	"strings"
	"testing"

	"github.com/rewind-debugger/rewind/debugger"
)

// TestWhy: the why tool explains corrupt.c's crash in one call: a fault in
// sum, followed back to set_name's copy past the end of name into next,
// with a moment goto reaches.
func TestWhy(t *testing.T) {
	cs := connect(t, traceOf(t))
	w := decode[debugger.Why](t, call(t, cs, toolWhy, WhyInput{}))
	if w.Failure.Kind != "signal" || w.Failure.Place.Function != "sum" {
		t.Fatalf("failure %+v, want the fault in sum", w.Failure)
	}
	if w.Suspect < 0 || w.Suspect >= len(w.Chain) {
		t.Fatalf("no suspect in %+v (verdict %q)", w.Chain, w.Verdict)
	}
	link := w.Chain[w.Suspect]
	if link.Function != "set_name" || !strings.Contains(link.Suspicion, "out of bounds") || !strings.Contains(link.What, "next") {
		t.Errorf("suspect %+v, want set_name's out-of-bounds write of next", link)
	}
	r := decode[debugger.Result](t, call(t, cs, toolGoto, GotoInput{Target: link.Moment}))
	if !r.OK || r.Stop == nil || r.Stop.Function != "set_name" {
		t.Errorf("goto %s: %+v, want set_name", link.Moment, r)
	}
}
