package trace

// crcCombine returns the CRC-32C of a followed by b from the CRC-32C of
// each and the length of b. A blob copied from the cache into a trace is
// never read into the recorder's memory (copyEntry), so its frame's CRC,
// which covers the blob id's frame and the cached frames, is made from the
// CRC the cache keeps of the latter.
//
// A CRC is the remainder of the message, as a polynomial over GF(2), by the
// CRC's polynomial: appending n bytes to a multiplies a's remainder by
// x^(8n) modulo that polynomial (the pre- and post-conditioning of the
// register cancel out in the XOR with b's CRC).
func crcCombine(crcA, crcB uint32, lenB int64) uint32 {
	if lenB <= 0 {
		return crcA
	}
	return mulModP(xPow8N(lenB), crcA) ^ crcB
}

// castagnoliReversed is the CRC-32C polynomial, bit-reversed: the
// representation in which bit 31 is x^0 (the CRC's own).
const castagnoliReversed = 0x82F63B78

// mulModP returns a·b modulo the CRC-32C polynomial, both in the CRC's
// bit order.
func mulModP(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1) << 31; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
		}
		if b&1 != 0 {
			b = b>>1 ^ castagnoliReversed
		} else {
			b >>= 1
		}
	}
	return p
}

// xPow8N returns x^(8n) modulo the CRC-32C polynomial, by squaring:
// x^(2^k) for each bit k of 8n that is set.
func xPow8N(n int64) uint32 {
	p := uint32(1) << 31        // x^0
	sq := uint32(1) << (31 - 8) // x^8: n counts bytes
	for u := uint64(n); u != 0; u >>= 1 {
		if u&1 != 0 {
			p = mulModP(sq, p)
		}
		sq = mulModP(sq, sq)
	}
	return p
}
