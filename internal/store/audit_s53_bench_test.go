package store

import (
	"fmt"
	"testing"

	"github.com/kindex/kindex/query"
)

// BenchmarkAuditS53Page is a page of 100, sorted by a unique numeric value (descending), of
// the objects with one of four values of another index, on 4,000 and 100,000 objects in 10
// namespaces: the shape of bench's BenchmarkAuditS53/Page, in process.
func BenchmarkAuditS53Page(b *testing.B) {
	for _, n := range []int{4000, 100_000} {
		for _, desc := range []bool{false, true} {
			b.Run(fmt.Sprint(n, "/desc=", desc), func(b *testing.B) {
				s := New(Options{})
				if err := s.AddIndex("node", field("node")); err != nil {
					b.Fatal(err)
				}
				if err := s.AddIndex("size", field("size")); err != nil {
					b.Fatal(err)
				}
				for i := range n {
					o := obj(fmt.Sprintf("ns-%d", i%10), fmt.Sprintf("o-%05d", i), int64(1000+i), fmt.Sprintf("zone-%d", i%4), nil)
					if err := s.Add(o); err != nil {
						b.Fatal(err)
					}
				}
				q := query.Query{Conditions: []query.Condition{query.Eq("node", "zone-1")}, SortBy: "size", Descending: desc, Limit: 100}
				if _, _, _, err := s.Query(ctx, q, QueryOptions{}); err != nil {
					b.Fatal(err)
				}
				var plan query.Plan
				for b.Loop() {
					items, next, p, err := s.Query(ctx, q, QueryOptions{})
					if err != nil || len(items) != 100 || next == "" {
						b.Fatal(err, len(items))
					}
					plan = p
				}
				b.Logf("%+v", plan)
			})
		}
	}
}
