package informer

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/query"
)

// While a resource moves to another version, a set's queries and counts read the previous
// version's member until the new one has synced, and then the new one: at no moment,
// including the release of the previous member (whose indexes go with it), does a query fail
// or miss the resource's objects.
func TestWatchAllReadsThroughAMove(t *testing.T) {
	e := newEnv(t, Options[obj]{}, widgets)
	ctx := context.Background()
	widgetsV2 := resource("example.com", "v2", "widgets")
	serve(e.mode.server(widgets.GVR), "o", 0, 30)
	v2 := e.mode.server(widgetsV2.GVR)
	serve(v2, "o", 0, 30)
	gate := make(chan struct{})
	v2.mu.Lock()
	v2.listGate = gate
	v2.mu.Unlock()

	wa, err := e.f.WatchAll(ctx, discovery.Filter{})
	require.NoError(t, err)
	defer wa.Stop()
	require.NoError(t, wa.WaitForSync(ctx))
	require.NoError(t, wa.AddIndex("name", "{.metadata.name}"))
	q := query.Query{Conditions: []query.Condition{query.Has("name")}}
	check := func(when string) {
		t.Helper()
		n, err := wa.Count(ctx, q)
		require.NoError(t, err, when)
		require.Equal(t, 30, n, when)
		page := q
		page.Limit = 7
		res, err := wa.QueryItems(ctx, page)
		require.NoError(t, err, when)
		require.Len(t, res.Items, 7, when)
		by, err := wa.CountBy(ctx, q, "name")
		require.NoError(t, err, when)
		require.Len(t, by, 30, when)
	}
	check("before the move")

	gr := widgets.GVR.GroupResource()
	e.disc.emit(discovery.Event{Type: discovery.Changed, Resource: widgetsV2, Old: &widgets})
	eventually(t, func() bool { inf, ok := wa.Informer(gr); return ok && inf.Key().GVR.Version == "v2" }, "v2 joined")
	for range 20 {
		check("v2's list held: v1 is read")
	}
	close(gate)
	v1Gone := func() bool {
		for _, st := range e.f.Statuses() {
			if st.Key.GVR == widgets.GVR {
				return false
			}
		}
		return true
	}
	for !v1Gone() {
		check("around v1's release")
	}
	check("after the move")
}
