package store

import (
	"fmt"
	"runtime"
	"slices"
	"testing"

	"time"

	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/query"
)

// newBenchIndexes returns an empty store indexed by node and size.
func newBenchIndexes(b *testing.B) *Store {
	b.Helper()
	s := New(Options{})
	if err := s.AddIndex("node", field("node")); err != nil {
		b.Fatal(err)
	}
	if err := s.AddIndex("size", field("size")); err != nil {
		b.Fatal(err)
	}
	return s
}

// benchStore holds n objects in 100 namespaces, indexed by node (1,000 values) and size (5).
func benchStore(b *testing.B, n int) *Store {
	b.Helper()
	s := newBenchIndexes(b)
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
			runtime.GC() // the setup's garbage is not collected on the clock
			for b.Loop() {
				items, _, _, err := s.Query(ctx, q, QueryOptions{})
				if err != nil || len(items) == 0 {
					b.Fatal(err, len(items))
				}
			}
		})
	}
	// The objects alone, as Informer.Query hands them out in the modes that store the
	// object it returns: the read BenchmarkClientGoByIndex100k compares with.
	b.Run("eq-objects", func(b *testing.B) {
		b.ReportAllocs()
		runtime.GC() // the setup's garbage is not collected on the clock
		for b.Loop() {
			objs, _, _, err := QueryAs(ctx, s, cases["eq"], QueryOptions{}, func(_ string, obj any) any { return obj })
			if err != nil || len(objs) != 100 {
				b.Fatal(err, len(objs))
			}
		}
	})
	// Results of three words, as Informer.QueryItems hands out its Items.
	type item struct {
		obj any
		c   *Store
	}
	b.Run("eq-items", func(b *testing.B) {
		b.ReportAllocs()
		runtime.GC()
		for b.Loop() {
			items, _, _, err := QueryAs(ctx, s, cases["eq"], QueryOptions{}, func(_ string, obj any) item { return item{obj, s} })
			if err != nil || len(items) != 100 {
				b.Fatal(err, len(items))
			}
		}
	})
}

// BenchmarkStorePage is a page of 100 from a 60% match set on 100,000 and 150,000 objects, in
// (namespace, name) order and sorted by an indexed value, each with its continue token; the
// p99 of single pages is reported. `go test -run '^$' -bench StorePage ./internal/store`.
func BenchmarkStorePage(b *testing.B) {
	for _, n := range []int{100_000, 150_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) { benchPages(b, n) })
	}
}

func benchPages(b *testing.B, n int) {
	s := benchStore(b, n)
	half := query.Condition{Index: "size", Op: query.LessThan, Values: []string{"3"}} // sizes 0-2 of 0-4
	for name, q := range map[string]query.Query{
		"key-order":  {Conditions: []query.Condition{half}, Limit: 100},
		"by-node":    {Conditions: []query.Condition{half}, Limit: 100, SortBy: "node"},
		"by-node-ds": {Conditions: []query.Condition{half}, Limit: 100, SortBy: "node", Descending: true},
	} {
		b.Run(name, func(b *testing.B) {
			// The first query that sorts by an index orders it (once): not a page's cost.
			if _, _, _, err := s.Query(ctx, q, QueryOptions{}); err != nil {
				b.Fatal(err)
			}
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				items, next, plan, err := s.Query(ctx, q, QueryOptions{})
				lat = append(lat, time.Since(start))
				if err != nil || len(items) != 100 || next == "" || plan.Matched < 101 {
					b.Fatal(err, len(items), plan.Matched)
				}
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-us")
		})
	}
}

// BenchmarkStoreOrderIndex100k is what the first query that sorts by an index pays once:
// ordering its 100,000 entries.
func BenchmarkStoreOrderIndex100k(b *testing.B) {
	s := benchStore(b, 100_000)
	for b.Loop() {
		b.StopTimer()
		s.mu.Lock()
		s.indexes["node"].ordered = nil
		s.mu.Unlock()
		b.StartTimer()
		s.ensureOrdered("node")
	}
}

// BenchmarkStoreCountBy100k counts 100,000 objects per node (1,000 values).
func BenchmarkStoreCountBy100k(b *testing.B) {
	s := benchStore(b, 100_000)
	for b.Loop() {
		by, err := s.CountBy(ctx, query.Query{}, "node", QueryOptions{})
		if err != nil || len(by) != 1000 {
			b.Fatal(err, len(by))
		}
	}
}

// BenchmarkClientGoByIndex100k is client-go's indexer on the objects of benchStore: the
// equality lookup BenchmarkStoreQuery100k/eq answers (100 matches, unsorted).
func BenchmarkClientGoByIndex100k(b *testing.B) {
	ix := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{"node": cache.IndexFunc(field("node"))})
	for i := range 100_000 {
		o := obj(fmt.Sprintf("ns-%d", i%100), fmt.Sprintf("o-%d", i), int64(i%5), fmt.Sprintf("node-%d", i%1000), nil)
		if err := ix.Add(o); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	runtime.GC() // the setup's garbage is not collected on the clock
	for b.Loop() {
		if got, err := ix.ByIndex("node", "node-7"); err != nil || len(got) != 100 {
			b.Fatal(err, len(got))
		}
	}
}

// BenchmarkStoreTreeMemory reports what the ordered structures hold on 100,000 objects: the
// (namespace, name) tree per object, and an ordered index per (value, object) pair
// (heap after GC, built again each iteration).
func BenchmarkStoreTreeMemory(b *testing.B) {
	s := benchStore(b, 100_000)
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	var keyTree, ordered float64
	for b.Loop() {
		before := heap()
		t := newKeyTree()
		for _, rec := range s.items {
			t.ReplaceOrInsert(rec)
		}
		mid := heap()
		s.mu.Lock()
		s.indexes["node"].ordered = nil
		s.indexes["node"].makeOrdered()
		s.mu.Unlock()
		after := heap()
		s.mu.Lock()
		s.indexes["node"].ordered = nil // without: the next iteration's baseline holds it
		s.mu.Unlock()
		keyTree = float64(mid-before) / 100_000
		ordered = float64(after-mid) / 100_000
		runtime.KeepAlive(t)
	}
	b.ReportMetric(keyTree, "key-tree-B/object")
	b.ReportMetric(ordered, "ordered-B/pair")
}

// BenchmarkStoreFill adds 100,000 objects to an empty store with two indexes, as a sync or
// a snapshot's load does: all in one namespace (as a namespaced informer's), in random
// order and in key order (as a LIST returns them and Store.List writes snapshots), and
// spread over 100 namespaces of different lengths. Reported per object.
func BenchmarkStoreFill(b *testing.B) {
	const n = 100_000
	for _, tc := range []struct {
		name    string
		ns      func(i int) string
		inOrder bool
	}{
		{"one-namespace", func(int) string { return "kindex-bench-100000" }, false},
		{"one-namespace-in-order", func(int) string { return "kindex-bench-100000" }, true},
		{"100-namespaces", func(i int) string { return fmt.Sprintf("ns-%d", i%100) }, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			objs := make([]any, n)
			for i := range objs {
				k := (i * 7919) % n
				if tc.inOrder {
					k = i
				}
				objs[i] = obj(tc.ns(i), fmt.Sprintf("pod-%06d", k), int64(i%5), fmt.Sprintf("node-%d", i%1000), nil)
			}
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				s := newBenchIndexes(b)
				b.StartTimer()
				for _, o := range objs {
					if err := s.Add(o); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/object")
		})
	}
}

// BenchmarkStoreList is List on 100,000 objects, which walks the key tree, and, for
// comparison, the walk of the key map that List made before it returned key order.
func BenchmarkStoreList(b *testing.B) {
	s := benchStore(b, 100_000)
	b.Run("List", func(b *testing.B) {
		for b.Loop() {
			if len(s.List()) != 100_000 {
				b.Fatal("short")
			}
		}
	})
	b.Run("map-walk", func(b *testing.B) {
		for b.Loop() {
			out := make([]any, 0, len(s.items))
			for _, rec := range s.items {
				out = append(out, rec.obj)
			}
			if len(out) != 100_000 {
				b.Fatal("short")
			}
		}
	})
}
