package store

import (
	"fmt"
	"testing"
)

// BenchmarkStoreAdd is the store's share of an initial sync: adding objects (two indexes).
func BenchmarkStoreAdd(b *testing.B) {
	objs := make([]any, 10_000)
	for i := range objs {
		objs[i] = obj(fmt.Sprintf("ns-%d", i%100), fmt.Sprintf("o-%d", i), int64(i%5), fmt.Sprintf("node-%d", i%1000), nil)
	}
	b.ReportAllocs()
	for b.Loop() {
		s := New(Options{})
		_ = s.AddIndex("node", field("node"))
		_ = s.AddIndex("size", field("size"))
		for _, o := range objs {
			_ = s.Add(o)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(objs)), "ns/object")
}
