package timeline

// checkpoint is a saved replay position to restart from.
type checkpoint struct {
	event int64
}

// checkpoints holds the saved positions within a memory budget.
type checkpoints struct {
	budget int64
	list   []*checkpoint
}

func newCheckpoints(budget int64) *checkpoints { return &checkpoints{budget: budget} }

// best returns the latest checkpoint at or before event n.
func (c *checkpoints) best(n int64) *checkpoint {
	var out *checkpoint
	for _, cp := range c.list {
		if cp.event <= n && (out == nil || cp.event > out.event) {
			out = cp
		}
	}
	return out
}

func (c *checkpoints) drop() { c.list = nil }

// restore puts the live replay at the best position at or before event n:
// for now, the beginning of the recording.
func (tl *Timeline) restore(n int64) error {
	return tl.restart()
}
