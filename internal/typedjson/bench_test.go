package typedjson

import (
	"encoding/json"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	sigsjson "sigs.k8s.io/json"

	"github.com/kindex/kindex/internal/jsondecode"
)

// Run with:
//
//	go test -run='^$' -bench=DecodePod -benchmem -count=6 ./internal/typedjson/
//
// BenchmarkDecodePod decodes distinct realistic Pods (podgen_test.go) one at a time into a
// new corev1.Pod with encoding/json, sigs.k8s.io/json (Kubernetes' serializer) and this
// package, and into map[string]any with jsondecode, the decoder of Item.Object in the
// compact mode. "stored" Pods are as the compact mode stores them, managedFields cut
// (4.5 KB of JSON); "full" ones keep them (7.7 KB). Besides the wall time it reports the
// CPU time of the process per Pod (cpu-ns/op), which varies less on a shared machine.

const benchPodCount = 1000

var benchPods = sync.OnceValues(func() (stored, full [][]byte) {
	for i := range benchPodCount {
		p := genPod(i)
		b, err := json.Marshal(p)
		if err != nil {
			panic(err)
		}
		full = append(full, b)
		p.ManagedFields = nil
		if b, err = json.Marshal(p); err != nil {
			panic(err)
		}
		stored = append(stored, b)
	}
	return stored, full
})

func BenchmarkDecodePod(b *testing.B) {
	stored, full := benchPods()
	decoders := []struct {
		name string
		fn   func([]byte) error
	}{
		{"encoding-json", func(data []byte) error { var p corev1.Pod; return json.Unmarshal(data, &p) }},
		{"sigs-json", func(data []byte) error {
			var p corev1.Pod
			return sigsjson.UnmarshalCaseSensitivePreserveInts(data, &p)
		}},
		{"unstructured", func(data []byte) error { _, err := jsondecode.Object(data); return err }},
		{"typedjson", func(data []byte) error { var p corev1.Pod; return Unmarshal(data, &p) }},
	}
	for _, set := range []struct {
		name string
		pods [][]byte
	}{{"stored", stored}, {"full", full}} {
		size := 0
		for _, p := range set.pods {
			size += len(p)
		}
		for _, dec := range decoders {
			b.Run(set.name+"/"+dec.name, func(b *testing.B) {
				b.SetBytes(int64(size / len(set.pods)))
				b.ReportAllocs()
				cpu0 := cpuTime()
				n := 0
				for b.Loop() {
					if err := dec.fn(set.pods[n%len(set.pods)]); err != nil {
						b.Fatal(err)
					}
					n++
				}
				if cpu0 >= 0 && n > 0 {
					b.ReportMetric(float64(cpuTime()-cpu0)/float64(n), "cpu-ns/op")
				}
			})
		}
	}
}
