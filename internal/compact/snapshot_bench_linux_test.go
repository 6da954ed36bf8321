package compact

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkFirstTouchHugePages is BenchmarkFirstTouch (its time; prepare-ms is the
// preparation's) after asking the kernel for huge pages
// on a region of the Go heap as large as the load, touching it and freeing it, so that the
// load's allocations reuse memory already given to the process in 2 MB pages (on a kernel
// whose transparent huge pages are on "madvise"). It measures the trick bench/README.md
// explains kindex does not play: it changes the memory of the whole process.
func BenchmarkFirstTouchHugePages(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		start := time.Now()
		region := make([]byte, 20000*5400)
		_ = unix.Madvise(region, unix.MADV_HUGEPAGE)
		for i := 0; i < len(region); i += 4096 {
			region[i] = 1
		}
		runtime.KeepAlive(region)
		region = nil
		runtime.GC()
		b.ReportMetric(float64(time.Since(start).Milliseconds()), "prepare-ms")
		b.StartTimer()
		b.ReportMetric(firstTouch(1), "MB/op")
	}
}
