package attach

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkAttachPause measures the pause a process sees while it is
// seized, snapshotted and detached, against its resident memory.
func BenchmarkAttachPause(b *testing.B) {
	bin := buildTarget(b)
	for _, mib := range []int{16, 256} {
		b.Run(fmt.Sprintf("%dMiB", mib), func(b *testing.B) {
			tg := startTarget(b, bin, mib)
			var worst time.Duration
			var kept int
			for i := 0; i < b.N; i++ {
				start := time.Now()
				snap := takeSnapshot(b, tg.pid, func() {})
				worst = max(worst, time.Since(start))
				kept = 0
				for _, m := range snap.Regions {
					kept += len(m.Data)
				}
			}
			b.ReportMetric(float64(worst.Microseconds())/1000, "worst-pause-ms")
			b.ReportMetric(float64(rssKiB(b, tg.pid))/1024, "rss-MiB")
			b.ReportMetric(float64(kept)/(1<<20), "bytes-kept-MiB")
		})
	}
}

// rssKiB reads VmRSS of pid.
func rssKiB(b *testing.B, pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.Fields(v)[0])
			return n
		}
	}
	b.Fatal("no VmRSS")
	return 0
}
