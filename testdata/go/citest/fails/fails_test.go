// Package fails is a test package whose test reports a wrong result.
package fails

import "testing"

func average(xs []int) int {
	sum := 0
	for _, x := range xs {
		sum += x
	}
	return sum / (len(xs) + 1) // off by one
}

func TestAverage(t *testing.T) {
	if got := average([]int{2, 4, 6}); got != 4 {
		t.Errorf("average = %d, want 4", got)
	}
}
