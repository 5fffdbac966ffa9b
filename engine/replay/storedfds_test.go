package replay

import "testing"

// TestStoredFds: descriptors kept per blob, the oldest given back to close
// past maxStoredFds, and a clone that changes on its own.
func TestStoredFds(t *testing.T) {
	var sf storedFds
	if _, ok := sf.fd(1); ok {
		t.Fatal("an empty set has a descriptor")
	}
	for blob := uint32(0); blob < maxStoredFds; blob++ {
		if c := sf.keep(blob, int(blob)+100); c != -1 {
			t.Fatalf("blob %d: close %d before the limit", blob, c)
		}
	}
	copied := sf.clone()
	if c := sf.keep(maxStoredFds, 999); c != 100 {
		t.Errorf("past the limit: close %d, want 100 (the oldest)", c)
	}
	if _, ok := sf.fd(0); ok {
		t.Error("the closed descriptor is still kept")
	}
	if fd, ok := sf.fd(maxStoredFds); !ok || fd != 999 {
		t.Errorf("the new one: %d %v", fd, ok)
	}
	if fd, ok := copied.fd(0); !ok || fd != 100 {
		t.Errorf("the clone lost its descriptor: %d %v", fd, ok)
	}
	if _, ok := copied.fd(maxStoredFds); ok {
		t.Error("the clone saw a later descriptor")
	}
	if empty := (storedFds{}).clone(); empty.byBlob != nil {
		t.Error("the clone of an empty set is not empty")
	}
}
