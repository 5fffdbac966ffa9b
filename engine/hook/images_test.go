package hook

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"strings"
	"testing"
)

// TestImageOf: this rewind's image, every kept earlier one under the ID it
// is named by, and none for an ID it does not have.
func TestImageOf(t *testing.T) {
	if img, ok := ImageOf(ID()); !ok || !bytes.Equal(img, Image) {
		t.Errorf("ImageOf(ID()) = %d bytes, %v; want Image", len(img), ok)
	}
	names, err := fs.Glob(images, "images/*.bin")
	if err != nil || len(names) == 0 {
		t.Fatalf("images/: %v, %v", names, err)
	}
	for _, n := range names {
		id := strings.TrimSuffix(strings.TrimPrefix(n, "images/"), ".bin")
		img, ok := ImageOf(id)
		sum := sha256.Sum256(img)
		if !ok || hex.EncodeToString(sum[:8]) != id || len(img) > CodeSize {
			t.Errorf("ImageOf(%s) = %d bytes, %v", id, len(img), ok)
		}
	}
	if _, ok := ImageOf("0123456789abcdef"); ok {
		t.Error("ImageOf of an unknown ID found one")
	}
}
