package hook

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
)

// Earlier images. A trace names the hook image it was recorded with
// (trace header's Hook), whose code its processes ran and whose code
// replay runs again: a rewind whose image differs could not replay it.
// images/ keeps the images of earlier rewinds whose layout (layout.h:
// the control page, the records, the addresses) this code still follows,
// each named by its ID, so that their traces replay. An image whose layout
// differs goes when the layout changes; TestRecordedElsewhere replays
// traces that earlier rewinds made.
//
//go:embed images/*.bin
var images embed.FS

// ImageOf returns the image whose ID is id: this rewind's, or one of
// images/; ok is false for one it does not have.
func ImageOf(id string) (img []byte, ok bool) {
	if id == ID() {
		return Image, true
	}
	b, err := images.ReadFile("images/" + id + ".bin")
	if err != nil {
		return nil, false
	}
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:8]) == id
}
