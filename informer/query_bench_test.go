package informer

import (
	"context"
	"fmt"
	"testing"

	"github.com/kindex/kindex/query"
)

// BenchmarkQueryItems10 is a 10-match equality query on 5,000 objects through the informer
// layer (fake server; the store's cost plus the informer's).
func BenchmarkQueryItems10(b *testing.B) {
	t := &testing.T{}
	e := newEnv(t, Options[obj]{})
	srv := e.mode.server(widgets.GVR)
	for i := range 5000 {
		srv.add(newObj(fmt.Sprintf("ns-%d", i%50), fmt.Sprintf("o%04d", i), map[string]string{"node": fmt.Sprint("n", i%500)}))
	}
	ctx := context.Background()
	inf, err := e.f.Informer(ctx, "widgets")
	if err != nil {
		b.Fatal(err)
	}
	defer inf.Release()
	if err := inf.WaitForSync(ctx); err != nil {
		b.Fatal(err)
	}
	if err := inf.AddIndex("node", "{.metadata.labels.node}"); err != nil {
		b.Fatal(err)
	}
	q := query.Query{Conditions: []query.Condition{query.Eq("node", "n7")}}
	b.ReportAllocs()
	for b.Loop() {
		res, err := inf.QueryItems(ctx, q)
		if err != nil || len(res.Items) != 10 {
			b.Fatal(err, len(res.Items))
		}
	}
}
