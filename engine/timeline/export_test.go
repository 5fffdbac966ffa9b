package timeline

import "time"

// SetCheckpointEvery changes how often checkpoints may be taken (0: at
// every chance, so that tests meet the checkpoints a loaded machine takes
// at unlucky places) and returns the function that puts it back.
func SetCheckpointEvery(d time.Duration) func() {
	old := checkpointEvery
	checkpointEvery = d
	return func() { checkpointEvery = old }
}

// CountedSearches is how many busy segments reverse searches counted
// instead of trapping every write (counted.go).
func (tl *Timeline) CountedSearches() int { return tl.counted }

// InnerCheckpoints returns how many checkpoints inside segments are held.
func (tl *Timeline) InnerCheckpoints() int { return len(tl.mids) }
