package informer

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/query"
)

// benchInformer returns a synced informer of 5,000 objects on a fake server (50 namespaces,
// label node=n0..n499: ten objects per node), and client-go's indexer of the same objects
// with the namespace index and the same node index, for reads measured side by side.
func benchInformer(b *testing.B) (*Informer[obj], cache.Indexer) {
	e := newEnv(&testing.T{}, Options[obj]{})
	srv := e.mode.server(widgets.GVR)
	cg := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
		"node":               func(o any) ([]string, error) { return []string{o.(obj).Labels["node"]}, nil },
	})
	for i := range 5000 {
		o := newObj(fmt.Sprintf("ns-%d", i%50), fmt.Sprintf("o%04d", i), map[string]string{"node": fmt.Sprint("n", i%500)})
		srv.add(o)
		if err := cg.Add(o); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	inf, err := e.f.Informer(ctx, "widgets")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(inf.Release)
	if err := inf.WaitForSync(ctx); err != nil {
		b.Fatal(err)
	}
	if err := inf.AddIndex("node", "{.metadata.labels.node}"); err != nil {
		b.Fatal(err)
	}
	return inf, cg
}

// BenchmarkQueryItems10 is a 10-match equality query on 5,000 objects through the informer
// layer (fake server; the store's cost plus the informer's).
func BenchmarkQueryItems10(b *testing.B) {
	inf, _ := benchInformer(b)
	ctx := context.Background()
	q := query.Query{Conditions: []query.Condition{query.Eq("node", "n7")}}
	b.ReportAllocs()
	for b.Loop() {
		res, err := inf.QueryItems(ctx, q)
		if err != nil || len(res.Items) != 10 {
			b.Fatal(err, len(res.Items))
		}
	}
}

// BenchmarkQuery10 is BenchmarkQueryItems10 with decoded results (Query), against client-go's
// ByIndex on an indexer of the same objects with the same index, in the same run:
// `go test -run '^$' -bench 'Query10|QueryItems10' -count 5 ./informer/`.
func BenchmarkQuery10(b *testing.B) {
	inf, cg := benchInformer(b)
	ctx := context.Background()
	q := query.Query{Conditions: []query.Condition{query.Eq("node", "n7")}}
	b.Run("kindex", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res, err := inf.Query(ctx, q)
			if err != nil || len(res.Items) != 10 {
				b.Fatal(err, len(res.Items))
			}
		}
	})
	b.Run("kindex-Count", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if n, err := inf.Count(ctx, q); err != nil || n != 10 {
				b.Fatal(err, n)
			}
		}
	})
	b.Run("client-go-ByIndex", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			got, err := cg.ByIndex("node", "n7")
			if err != nil || len(got) != 10 {
				b.Fatal(err, len(got))
			}
		}
	})
}

// BenchmarkList5000 lists 5,000 objects (a namespace's 100, and all) against client-go's
// indexer List and ByIndex(namespace) on the same objects, in the same run:
// `go test -run '^$' -bench List5000 -count 5 ./informer/`. (The fake mode's Object checks
// a map of undecodable names per object: most of the difference for all.)
func BenchmarkList5000(b *testing.B) {
	inf, cg := benchInformer(b)
	check := func(b *testing.B, n, want int, err error) {
		if err != nil || n != want {
			b.Fatal(err, n)
		}
	}
	b.Run("kindex-all", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			got, err := inf.List(nil)
			check(b, len(got), 5000, err)
		}
	})
	b.Run("client-go-all", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			check(b, len(cg.List()), 5000, nil)
		}
	})
	b.Run("kindex-namespace", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			got, err := inf.Namespace("ns-7").List(nil)
			check(b, len(got), 100, err)
		}
	})
	b.Run("client-go-namespace", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			got, err := cg.ByIndex(cache.NamespaceIndex, "ns-7")
			check(b, len(got), 100, err)
		}
	})
}
