package trace

import "testing"

func TestWriteSum(t *testing.T) {
	tests := []struct {
		alg  string
		data string
		want uint64
	}{
		// CRC-32C's check value (0xe3069283), shifted, low bit set.
		{WriteHashCRC, "123456789", 0xe3069283<<1 | 1},
		{WriteHashCRC, "", 1},
		// FNV-1a 64's, as traces before WriteHash hold.
		{"", "", 0xcbf29ce484222325 | 1},
		{"", "a", 0xaf63dc4c8601ec8c | 1},
	}
	for _, tt := range tests {
		if got := WriteSum(tt.alg, []byte(tt.data)); got != tt.want {
			t.Errorf("WriteSum(%q, %q) = %#x, want %#x", tt.alg, tt.data, got, tt.want)
		}
	}
}
