package store

import (
	"fmt"
	"testing"

	"github.com/kindex/kindex/query"
)

// benchStore holds n objects in 100 namespaces, indexed by node (1,000 values) and size (5).
func benchStore(b *testing.B, n int) *Store {
	b.Helper()
	s := New(Options{})
	if err := s.AddIndex("node", field("node")); err != nil {
		b.Fatal(err)
	}
	if err := s.AddIndex("size", field("size")); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		o := obj(fmt.Sprintf("ns-%d", i%100), fmt.Sprintf("o-%d", i), int64(i%5), fmt.Sprintf("node-%d", i%1000), nil)
		if err := s.Add(o); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

func BenchmarkStoreQuery100k(b *testing.B) {
	s := benchStore(b, 100_000)
	cases := map[string]query.Query{
		"eq":            {Conditions: []query.Condition{query.Eq("node", "node-7")}},
		"eq-namespaced": {Namespace: "ns-7", Conditions: []query.Condition{query.Eq("node", "node-7")}},
		"and":           {Conditions: []query.Condition{query.Eq("size", "2"), query.Eq("node", "node-7")}},
	}
	for name, q := range cases {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				items, _, _, err := s.Query(ctx, q, QueryOptions{})
				if err != nil || len(items) == 0 {
					b.Fatal(err, len(items))
				}
			}
		})
	}
}
