package typedjson

import (
	"bytes"
	"encoding/json"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/kindex/kindex/internal/testsupport/podgen"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsjson "sigs.k8s.io/json"

	"github.com/kindex/kindex/internal/jsondecode"
)

// Run with:
//
//	go test -run='^$' -bench=DecodePod -benchmem -count=6 ./internal/typedjson/
//	go test -run='^$' -bench=DecodePodBest -benchtime=300x ./internal/typedjson/
//
// BenchmarkDecodePod decodes distinct realistic Pods (internal/testsupport/podgen) one at a time into a
// new corev1.Pod with encoding/json, sigs.k8s.io/json (Kubernetes' serializer) and this
// package, into map[string]any with jsondecode, the decoder of Item.Object in the compact
// mode, and into *unstructured.Unstructured as client-go's dynamic client does
// (unstructured.UnstructuredJSONScheme). "stored" Pods are as the compact mode stores them, managedFields cut
// (4.5 KB of JSON); "full" ones keep them (7.7 KB). Besides the wall time it reports the
// CPU time of the process per Pod (cpu-ns/op), which varies less on a shared machine.

const benchPodCount = 1000

var benchPods = sync.OnceValues(func() (stored, full [][]byte) {
	for i := range benchPodCount {
		p := podgen.GenPod(i)
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

// apiserverPods are Pods as an API server returns them (defaults set, managedFields cut as
// the compact mode stores them): podgen's Pods created on a test API server by the reads
// benchmark (bench/reads_bench_test.go), 3.7 KB each, with more arrays and maps per byte.
var apiserverPods = sync.OnceValue(func() [][]byte {
	data, err := os.ReadFile("testdata/apiserver-pods.jsonl")
	if err != nil {
		panic(err)
	}
	return bytes.Split(bytes.TrimSpace(data), []byte("\n"))
})

var benchDecoders = []struct {
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
	// As Item.DecodeInto decodes the bytes a compact cache holds.
	{"typedjson-shared", func(data []byte) error { var p corev1.Pod; return UnmarshalShared(data, &p) }},
	// How client-go's dynamic client decodes an object to unstructured.
	{"client-go-unstructured", func(data []byte) error {
		_, _, err := unstructured.UnstructuredJSONScheme.Decode(data, nil, &unstructured.Unstructured{})
		return err
	}},
}

func BenchmarkDecodePod(b *testing.B) {
	stored, full := benchPods()
	decoders := benchDecoders
	for _, set := range []struct {
		name string
		pods [][]byte
	}{{"stored", stored}, {"full", full}, {"apiserver", apiserverPods()}} {
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

// BenchmarkDecodePodBest decodes the stored Pods (and, as "apiserver", the Pods an API
// server made) in batches of 50, each decoder in turn,
// and reports each decoder's best batch (ns per Pod) and the ratio of typedjson's to the
// unstructured decode's (and typedjson-shared's): on a shared machine, where other work stretches some batches,
// the best of a few hundred is what the decoders themselves cost. Each iteration is one
// round of batches; run it with -benchtime=300x.
func BenchmarkDecodePodBest(b *testing.B) {
	stored, _ := benchPods()
	for _, set := range []struct {
		name string
		pods [][]byte
	}{{"stored", stored}, {"apiserver", apiserverPods()}} {
		b.Run(set.name, func(b *testing.B) { decodeBest(b, set.pods) })
	}
}

func decodeBest(b *testing.B, pods [][]byte) {
	const batch = 50
	best := make([]time.Duration, len(benchDecoders))
	n := 0
	for b.Loop() {
		for k, dec := range benchDecoders {
			start := time.Now()
			for range batch {
				if err := dec.fn(pods[n%len(pods)]); err != nil {
					b.Fatal(err)
				}
				n++
			}
			if d := time.Since(start); best[k] == 0 || d < best[k] {
				best[k] = d
			}
		}
	}
	by := map[string]time.Duration{}
	for k, dec := range benchDecoders {
		b.ReportMetric(float64(best[k].Nanoseconds())/batch, dec.name+"-ns/pod")
		by[dec.name] = best[k]
	}
	b.ReportMetric(float64(by["typedjson"])/float64(by["unstructured"]), "typed/unstructured")
	b.ReportMetric(float64(by["typedjson-shared"])/float64(by["unstructured"]), "shared/unstructured")
	b.ReportMetric(float64(by["typedjson"])/float64(by["client-go-unstructured"]), "typed/client-go-unstructured")
}
