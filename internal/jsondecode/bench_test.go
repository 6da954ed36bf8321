package jsondecode

import (
	"runtime"
	"sync"
	"testing"

	"github.com/kindex/kindex/internal/testsupport/podgen"
)

// Run with:
//
//	go test -run='^$' -bench=DecodePod -benchtime=3000x ./internal/jsondecode/
//	go test -run='^$' -bench=Retained -benchtime=1x ./internal/jsondecode/
//
// BenchmarkDecodePod decodes distinct realistic Pods (see podgen_test.go) one at a
// time, as a reflector does with list items and watch events, and reports the CPU time
// of the process per Pod besides the wall time (on a shared machine it varies less).
// BenchmarkRetained decodes 20,000 of them, keeps the results and reports the live heap
// per object after a GC.

var (
	podsOnce sync.Once
	pods     [][]byte
	podBytes int
)

const retainedN = 20_000

func benchPods() [][]byte {
	podsOnce.Do(func() {
		pods = make([][]byte, retainedN)
		for i := range pods {
			pods[i] = podgen.GenPodJSON(i)
			podBytes += len(pods[i])
		}
	})
	return pods
}

type decodeFunc func([]byte) (map[string]any, error)

func decoders() []struct {
	name string
	fn   func() decodeFunc
} {
	return []struct {
		name string
		fn   func() decodeFunc
	}{
		{"utiljson", func() decodeFunc { return referenceObject }},
		{"jsondecode", func() decodeFunc { return Object }},
		{"jsondecode-Decoder", func() decodeFunc { return new(Decoder).Object }},
	}
}

func BenchmarkDecodePod(b *testing.B) {
	ps := benchPods()
	for _, dec := range decoders() {
		b.Run(dec.name, func(b *testing.B) {
			fn := dec.fn()
			b.SetBytes(int64(podBytes / len(ps)))
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				if _, err := fn(ps[i%len(ps)]); err != nil {
					b.Fatal(err)
				}
			}
			if cpu0 >= 0 {
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}

// BenchmarkRetained reports the heap that 20,000 decoded Pods keep alive, per Pod, with
// managedFields kept and with them deleted after decoding (as kindex's default transform
// does). Run it with -benchtime=1x.
func BenchmarkRetained(b *testing.B) {
	ps := benchPods()
	for _, strip := range []bool{false, true} {
		for _, dec := range decoders() {
			name := dec.name
			if strip {
				name += "/stripped"
			}
			b.Run(name, func(b *testing.B) {
				if b.N > 1 {
					b.Skip("one run decodes 20,000 Pods: use -benchtime=1x")
				}
				fn := dec.fn()
				var perObj float64
				for n := 0; n < b.N; n++ {
					out := make([]map[string]any, len(ps))
					before := heapAfterGC()
					for i, p := range ps {
						m, err := fn(p)
						if err != nil {
							b.Fatal(err)
						}
						if strip {
							delete(m["metadata"].(map[string]any), "managedFields")
						}
						out[i] = m
					}
					after := heapAfterGC()
					runtime.KeepAlive(out)
					perObj = float64(after-before) / float64(len(ps))
				}
				b.ReportMetric(perObj, "B/obj-retained")
				b.ReportMetric(float64(podBytes)/float64(len(ps)), "B/obj-json")
			})
		}
	}
}

func heapAfterGC() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
