package informer

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/query"
)

// A watch-all set's indexes reach every member, current and joining, and a query across
// the set names each result's resource, pages across resources and counts.
func TestWatchAllIndexesAndQueries(t *testing.T) {
	things := resource("example.com", "v1", "things")
	e := newEnv(t, Options[obj]{}, widgets, gadgets)
	ctx := context.Background()
	team := func(ns, name, t string) obj { return newObj(ns, name, map[string]string{"team": t}) }
	e.mode.server(widgets.GVR).add(team("ns", "w1", "a"))
	e.mode.server(widgets.GVR).add(team("ns", "w2", "b"))
	e.mode.server(gadgets.GVR).add(team("ns", "g1", "a"))
	e.mode.server(gadgets.GVR).add(team("other", "g2", "a"))
	e.mode.server(things.GVR).add(team("ns", "t1", "a"))

	ws, err := e.f.WatchAll(ctx, discovery.Filter{})
	require.NoError(t, err)
	defer ws.Stop()
	require.NoError(t, ws.WaitForSync(ctx))
	require.NoError(t, ws.AddIndex("team", "{.metadata.labels.team}"))
	require.NoError(t, ws.AddIndex("team", ".metadata.labels.team"), "the same definition again")
	assert.ErrorIs(t, ws.AddIndex("team", "{.metadata.name}"), ErrIndexConflict)

	got := func(q query.Query) []string {
		t.Helper()
		var out []string
		for page := 0; ; page++ {
			require.Less(t, page, 20)
			res, err := ws.QueryItems(ctx, q)
			require.NoError(t, err)
			for _, it := range res.Items {
				out = append(out, it.Resource.GVR.Resource+" "+it.Key())
			}
			if res.Continue == "" {
				return out
			}
			q.Continue = res.Continue
		}
	}
	teamA := query.Query{Conditions: []query.Condition{query.Eq("team", "a")}}
	want := []string{"gadgets ns/g1", "gadgets other/g2", "widgets ns/w1"}
	assert.Equal(t, want, got(teamA))
	for _, limit := range []int{1, 2, 3, 4} {
		q := teamA
		q.Limit = limit
		assert.Equal(t, want, got(q), "pages of %d", limit)
	}
	n, err := ws.Count(ctx, teamA)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	byTeam, err := ws.CountBy(ctx, query.Query{}, "team")
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"a": 3, "b": 1}, byTeam, "summed over widgets and gadgets")
	_, err = ws.CountBy(ctx, query.Query{}, "tier")
	assert.ErrorIs(t, err, ErrIndexNotFound)
	//nolint:staticcheck // a nil context is the bad input
	_, err = ws.CountBy(nil, teamA, "team")
	assert.ErrorIs(t, err, ErrNilContext)

	// A resource that joins gets the index.
	e.disc.emit(discovery.Event{Type: discovery.Added, Resource: things})
	eventually(t, func() bool { return len(ws.Informers()) == 3 }, "things joined")
	require.NoError(t, ws.WaitForSync(ctx))
	assert.Equal(t, []string{"gadgets ns/g1", "gadgets other/g2", "things ns/t1", "widgets ns/w1"}, got(teamA), "ordered by resource")

	// A token of another query, or made up, is refused.
	q := teamA
	q.Limit = 1
	res, err := ws.QueryItems(ctx, q)
	require.NoError(t, err)
	other := query.Query{Conditions: []query.Condition{query.Eq("team", "b")}, Limit: 1, Continue: res.Continue}
	_, err = ws.QueryItems(ctx, other)
	assert.ErrorIs(t, err, ErrInvalidContinue)
	q.Continue = "d2lkZ2V0cwo"
	_, err = ws.QueryItems(ctx, q)
	assert.ErrorIs(t, err, ErrInvalidContinue)

	require.NoError(t, ws.RemoveIndex("team"))
	_, err = ws.QueryItems(ctx, teamA)
	assert.ErrorIs(t, err, ErrIndexNotFound)
	_, err = ws.CountBy(ctx, query.Query{}, "team")
	assert.ErrorIs(t, err, ErrIndexNotFound, "counts by an index the set removed")
	for _, inf := range ws.Informers() {
		assert.NotContains(t, inf.IndexNames(), "team", fmt.Sprint(inf.Resource().GVR))
	}
}

// A watch-all set checks a query as its members do, once and before naming any member:
// QueryItems refuses Descending without SortBy even with no member to refuse it, and Count
// ignores Limit, Continue, SortBy and Descending as an informer's Count does.
func TestWatchAllChecksQueriesAsItsMembers(t *testing.T) {
	e := newEnv(t, Options[obj]{}, widgets)
	ctx := context.Background()
	e.mode.server(widgets.GVR).add(newObj("ns", "w1", map[string]string{"team": "a"}))
	ws, err := e.f.WatchAll(ctx, discovery.Filter{})
	require.NoError(t, err)
	defer ws.Stop()
	require.NoError(t, ws.WaitForSync(ctx))
	none, err := e.f.WatchAll(ctx, discovery.Filter{IncludeResources: []string{"nothing.example.com"}})
	require.NoError(t, err)
	defer none.Stop()
	require.NoError(t, ws.AddIndex("team", "{.metadata.labels.team}"))
	inf := ws.Informers()[0]

	teamA := query.Query{Conditions: []query.Condition{query.Eq("team", "a")}}
	bad := teamA
	bad.Descending = true
	_, err = inf.Query(ctx, bad)
	require.ErrorIs(t, err, query.ErrInvalidQuery, "an informer refuses it")
	for name, set := range map[string]*WatchAll[obj]{"a set": ws, "an empty set": none} {
		_, err = set.QueryItems(ctx, bad)
		require.ErrorIs(t, err, query.ErrInvalidQuery, name)
		assert.NotContains(t, err.Error(), "widgets", name)
	}

	ignored := teamA
	ignored.Limit, ignored.Continue, ignored.SortBy, ignored.Descending = -1, "garbage", "nope", true
	n, err := inf.Count(ctx, ignored)
	require.NoError(t, err, "an informer's Count ignores them")
	assert.Equal(t, 1, n)
	ignored.SortBy = ""
	n, err = inf.Count(ctx, ignored)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	n, err = ws.Count(ctx, ignored)
	require.NoError(t, err, "and so does a set's")
	assert.Equal(t, 1, n)
}

// A query without a positive indexed condition and without Scan is refused by a watch-all
// set as by each of its informers, with query.ErrScanRequired, before naming any member and
// even with no member; Count answers a query without any condition from sizes, as an
// informer's does, and needs Scan for any other.
func TestWatchAllRequiresScanAsItsMembers(t *testing.T) {
	e := newEnv(t, Options[obj]{}, widgets)
	ctx := context.Background()
	e.mode.server(widgets.GVR).add(newObj("ns", "w1", map[string]string{"team": "a"}))
	ws, err := e.f.WatchAll(ctx, discovery.Filter{})
	require.NoError(t, err)
	defer ws.Stop()
	require.NoError(t, ws.WaitForSync(ctx))
	none, err := e.f.WatchAll(ctx, discovery.Filter{IncludeResources: []string{"nothing.example.com"}})
	require.NoError(t, err)
	defer none.Stop()
	require.NoError(t, ws.AddIndex("team", "{.metadata.labels.team}"))
	inf := ws.Informers()[0]

	negative := query.Query{Conditions: []query.Condition{query.NotEq("team", "b")}}
	group := query.Query{AnyOf: [][]query.Condition{{query.Eq("team", "a")}, {query.NotEq("team", "a")}}}
	labeled := query.Query{Labels: labels.SelectorFromSet(labels.Set{"team": "a"})}
	for name, q := range map[string]query.Query{"negative": negative, "AnyOf": group, "labels": labeled} {
		_, err := inf.Query(ctx, q)
		require.ErrorIs(t, err, query.ErrScanRequired, "%s: an informer refuses it", name)
		_, err = inf.Count(ctx, q)
		require.ErrorIs(t, err, query.ErrScanRequired, "%s: an informer's Count too", name)
		for set, w := range map[string]*WatchAll[obj]{"a set": ws, "an empty set": none} {
			_, err := w.QueryItems(ctx, q)
			require.ErrorIs(t, err, query.ErrScanRequired, "%s: %s", name, set)
			assert.NotContains(t, err.Error(), "widgets", "%s: %s: the query's own error", name, set)
			_, err = w.Count(ctx, q)
			require.ErrorIs(t, err, query.ErrScanRequired, "%s: %s counting", name, set)
			assert.NotContains(t, err.Error(), "widgets", "%s: %s counting", name, set)
		}
	}
	_, err = none.QueryItems(ctx, group)
	assert.ErrorContains(t, err, "AnyOf group 1", "the group without an index is named")

	// With Scan, the set answers; Count of no condition needs none.
	negative.Scan = true
	res, err := ws.QueryItems(ctx, negative)
	require.NoError(t, err)
	require.Len(t, res.Items, 1)
	assert.Equal(t, "ns/w1", res.Items[0].Key())
	for set, want := range map[*WatchAll[obj]]int{ws: 1, none: 0} {
		n, err := set.Count(ctx, query.Query{})
		require.NoError(t, err)
		assert.Equal(t, want, n)
		_, err = set.QueryItems(ctx, query.Query{})
		assert.ErrorIs(t, err, query.ErrScanRequired, "a query without any condition is a scan")
	}
}

// A watch-all set compiles the JSONPath conditions of a query under the factory's
// Options.QueryJSONPath limits, as its informers do, not under jsonpath's defaults: it
// answers a condition longer than the default limit that its members accept, and refuses
// one over a stricter limit itself, before naming any member.
func TestWatchAllChecksJSONPathsUnderTheFactoryLimits(t *testing.T) {
	ctx := context.Background()
	path := func(n int) string { return "{.metadata.labels['" + strings.Repeat("k", n) + "']}" }
	set := func(t *testing.T, limits jsonpath.Options) (*WatchAll[obj], *Informer[obj]) {
		e := newEnv(t, Options[obj]{QueryJSONPath: limits}, widgets)
		e.mode.server(widgets.GVR).add(newObj("ns", "w1", map[string]string{"team": "a"}))
		ws, err := e.f.WatchAll(ctx, discovery.Filter{})
		require.NoError(t, err)
		t.Cleanup(ws.Stop)
		require.NoError(t, ws.WaitForSync(ctx))
		require.NoError(t, ws.AddIndex("team", "{.metadata.labels.team}"))
		return ws, ws.Informers()[0]
	}

	t.Run("a longer limit", func(t *testing.T) {
		ws, inf := set(t, jsonpath.Options{MaxLength: 3 * jsonpath.DefaultMaxLength})
		long := path(2 * jsonpath.DefaultMaxLength)
		q := query.Query{Conditions: []query.Condition{query.Eq("team", "a"), query.Where(long, query.NotExists)}}
		res, err := inf.Query(ctx, q)
		require.NoError(t, err, "the informer takes it")
		assert.Equal(t, []string{"w1"}, names(res.Items))
		items, err := ws.QueryItems(ctx, q)
		require.NoError(t, err, "and so does the set")
		require.Len(t, items.Items, 1)
		assert.Equal(t, "ns/w1", items.Items[0].Key())
		n, err := ws.Count(ctx, q)
		require.NoError(t, err)
		assert.Equal(t, 1, n)
	})

	t.Run("a shorter limit", func(t *testing.T) {
		ws, inf := set(t, jsonpath.Options{MaxLength: 40})
		q := query.Query{Conditions: []query.Condition{query.Eq("team", "a"), query.Where(path(50), query.NotExists)}}
		_, err := inf.Query(ctx, q)
		require.ErrorIs(t, err, query.ErrInvalidQuery, "the informer refuses it")
		var syntax *jsonpath.SyntaxError
		for _, err := range []error{
			func() error { _, err := ws.QueryItems(ctx, q); return err }(),
			func() error { _, err := ws.Count(ctx, q); return err }(),
		} {
			require.ErrorIs(t, err, query.ErrInvalidQuery, "and so does the set")
			assert.ErrorAs(t, err, &syntax)
			assert.NotContains(t, err.Error(), "widgets", "the query's own error, naming no member")
		}
	})
}

// A set's page carries a continue token only when more results follow, as an informer's
// does: a page full at the end of the last member with matches has none (the next page
// was empty).
func TestWatchAllContinueOnlyWhenMoreFollow(t *testing.T) {
	e := newEnv(t, Options[obj]{}, widgets, gadgets)
	ctx := context.Background()
	for _, name := range []string{"g1", "g2"} {
		e.mode.server(gadgets.GVR).add(newObj("ns", name, map[string]string{"team": "a"}))
	}
	e.mode.server(widgets.GVR).add(newObj("ns", "w1", map[string]string{"team": "b"}))
	ws, err := e.f.WatchAll(ctx, discovery.Filter{})
	require.NoError(t, err)
	defer ws.Stop()
	require.NoError(t, ws.WaitForSync(ctx))
	require.NoError(t, ws.AddIndex("team", "{.metadata.labels.team}"))

	pages := func(q query.Query) (out [][]string) {
		t.Helper()
		for range 10 {
			res, err := ws.QueryItems(ctx, q)
			require.NoError(t, err)
			var page []string
			for _, it := range res.Items {
				page = append(page, it.Key())
			}
			out = append(out, page)
			if res.Continue == "" {
				return out
			}
			q.Continue = res.Continue
		}
		t.Fatal("no last page")
		return nil
	}
	teamA := query.Query{Conditions: []query.Condition{query.Eq("team", "a")}, Limit: 2}
	assert.Equal(t, [][]string{{"ns/g1", "ns/g2"}}, pages(teamA), "widgets, after gadgets, has no match")
	anyTeam := query.Query{Conditions: []query.Condition{query.Has("team")}, Limit: 2}
	assert.Equal(t, [][]string{{"ns/g1", "ns/g2"}, {"ns/w1"}}, pages(anyTeam), "widgets has one")
	anyTeam.Limit = 3
	assert.Equal(t, [][]string{{"ns/g1", "ns/g2", "ns/w1"}}, pages(anyTeam), "full at the last member's end")
}

// A page of a watch-all set that ends at a member's end carries no member token, so its
// token was bound only to the query: another set running the same query accepted it and
// resumed after that resource. Tokens are bound to the set (its filter and options).
func TestWatchAllTokensAreBoundToTheSet(t *testing.T) {
	e := newEnv(t, Options[obj]{}, widgets, gadgets)
	ctx := context.Background()
	for _, name := range []string{"g1", "g2"} {
		e.mode.server(gadgets.GVR).add(newObj("ns", name, map[string]string{"team": "a"}))
	}
	e.mode.server(widgets.GVR).add(newObj("ns", "w1", map[string]string{"team": "a"}))
	set := func(f discovery.Filter) *WatchAll[obj] {
		ws, err := e.f.WatchAll(ctx, f)
		require.NoError(t, err)
		t.Cleanup(ws.Stop)
		require.NoError(t, ws.WaitForSync(ctx))
		require.NoError(t, ws.AddIndex("team", "{.metadata.labels.team}"))
		return ws
	}
	// The same members as every resource, named by another filter.
	both := discovery.Filter{IncludeResources: []string{"gadgets.example.com", "widgets.example.com"}}
	bothSet, sameFilter, all := set(both), set(both), set(discovery.Filter{})

	q := query.Query{Conditions: []query.Condition{query.Eq("team", "a")}, Limit: 2}
	res, err := bothSet.QueryItems(ctx, q)
	require.NoError(t, err)
	require.Len(t, res.Items, 2)
	require.NotEmpty(t, res.Continue, "the page is full at the first member's end")
	q.Continue = res.Continue

	_, err = all.QueryItems(ctx, q)
	assert.ErrorIs(t, err, ErrInvalidContinue, "a token of a set with another filter")
	for name, ws := range map[string]*WatchAll[obj]{"its set": bothSet, "a set of the same filter": sameFilter} {
		next, err := ws.QueryItems(ctx, q)
		require.NoError(t, err, name)
		require.Len(t, next.Items, 1, name)
		assert.Equal(t, "ns/w1", next.Items[0].Key(), name)
		assert.Empty(t, next.Continue, name)
	}
}

// An index removed while a member joins is not left on it: the set's definitions and its
// members' never part.
func TestWatchAllIndexRemovedWhileAMemberJoins(t *testing.T) {
	e := newEnv(t, Options[obj]{}, widgets)
	wa, err := e.f.WatchAll(context.Background(), discovery.Filter{})
	require.NoError(t, err)
	defer wa.Stop()
	require.NoError(t, wa.AddIndex("team", "{.metadata.labels.team}"))
	removed := make(chan error, 1)
	wa.wa.mu.Lock()
	wa.wa.afterIndexCopy = func() {
		// The joining member has read the set's indexes: remove one now. RemoveIndex waits
		// for the member's indexes to be registered, or (the bug) finishes first.
		go func() { removed <- wa.RemoveIndex("team") }()
		select {
		case err := <-removed:
			removed <- err
		case <-time.After(200 * time.Millisecond):
		}
	}
	wa.wa.mu.Unlock()
	e.disc.emit(discovery.Event{Type: discovery.Added, Resource: gadgets})
	require.NoError(t, <-removed)
	for _, inf := range wa.Informers() {
		assert.Empty(t, inf.IndexNames(), "%s", inf.Key().GVR)
	}
}

// A stopped set answers no query: QueryItems and Count fail as an informer's reads do after
// Release or Shutdown, where they answered that nothing matched (a stopped set has no
// members).
func TestWatchAllStoppedAnswersNoQuery(t *testing.T) {
	e := newEnv(t, Options[obj]{}, widgets)
	ctx := context.Background()
	e.mode.server(widgets.GVR).add(newObj("ns", "w1", map[string]string{"team": "a"}))
	set := func() *WatchAll[obj] {
		ws, err := e.f.WatchAll(ctx, discovery.Filter{})
		require.NoError(t, err)
		require.NoError(t, ws.WaitForSync(ctx))
		require.NoError(t, ws.AddIndex("team", "{.metadata.labels.team}"))
		return ws
	}
	teamA := query.Query{Conditions: []query.Condition{query.Eq("team", "a")}}
	stopped, other := set(), set()
	n, err := stopped.Count(ctx, teamA)
	require.NoError(t, err)
	require.Equal(t, 1, n)

	stopped.Stop()
	_, err = stopped.QueryItems(ctx, teamA)
	assert.ErrorIs(t, err, ErrReleased)
	_, err = stopped.Count(ctx, teamA)
	assert.ErrorIs(t, err, ErrReleased)
	_, err = stopped.Count(ctx, query.Query{})
	assert.ErrorIs(t, err, ErrReleased, "a count from sizes too")
	_, err = stopped.CountBy(ctx, query.Query{}, "team")
	assert.ErrorIs(t, err, ErrReleased, "counts by value too")
	assert.ErrorIs(t, stopped.RemoveIndex("team"), ErrReleased, "not ErrIndexNotFound: the set is gone, not the index")
	assert.ErrorIs(t, stopped.AddIndex("team", "{.metadata.labels.team}"), ErrReleased)

	e.f.Shutdown()
	_, err = other.QueryItems(ctx, teamA)
	assert.ErrorIs(t, err, ErrShutdown)
	_, err = other.Count(ctx, teamA)
	assert.ErrorIs(t, err, ErrShutdown)
}

// A member that holds one of the set's index names with another definition (registered on
// the informer before the set's) fails the set's queries and counts that name it: it
// answered them for its own definition, so that "team=a" returned an object whose team is
// b, matched by its name.
func TestWatchAllQueryRefusesAMemberIndexOfAnotherDefinition(t *testing.T) {
	e := newEnv(t, Options[obj]{}, widgets, gadgets)
	ctx := context.Background()
	e.mode.server(widgets.GVR).add(newObj("ns", "a", map[string]string{"team": "b"}))
	e.mode.server(gadgets.GVR).add(newObj("ns", "g", map[string]string{"team": "a"}))
	inf, err := e.f.Informer(ctx, "widgets.example.com")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.AddIndex("team", "{.metadata.name}"))
	ws, err := e.f.WatchAll(ctx, discovery.Filter{})
	require.NoError(t, err)
	defer ws.Stop()
	require.NoError(t, ws.WaitForSync(ctx))
	require.ErrorIs(t, ws.AddIndex("team", "{.metadata.labels.team}"), ErrIndexConflict, "widgets keeps its own")

	teamA := query.Query{Conditions: []query.Condition{query.Eq("team", "a")}}
	for name, q := range map[string]query.Query{"a condition": teamA, "a sort key": {Scan: true, SortBy: "team"},
		"pages": {Conditions: teamA.Conditions, Limit: 1}} {
		for page := 0; page < 5; page++ { // the error may come with a later page
			var res query.Result[ResourceItem[obj]]
			if res, err = ws.QueryItems(ctx, q); err != nil || res.Continue == "" {
				break
			}
			q.Continue = res.Continue
		}
		require.ErrorIs(t, err, ErrIndexConflict, name)
		assert.Contains(t, err.Error(), "widgets.example.com", name)
	}
	_, err = ws.Count(ctx, teamA)
	assert.ErrorIs(t, err, ErrIndexConflict)

	// Once the informer's own index is gone, the member takes the set's at the set's next
	// query, and the set answers.
	require.NoError(t, inf.RemoveIndex("team"))
	res, err := ws.QueryItems(ctx, teamA)
	require.NoError(t, err)
	require.Len(t, res.Items, 1)
	assert.Equal(t, "ns/g", res.Items[0].Key())
	n, err := ws.Count(ctx, query.Query{Conditions: []query.Condition{query.Eq("team", "b")}})
	require.NoError(t, err)
	assert.Equal(t, 1, n, "widgets/a, by the set's definition")
	// An index the set removed is not registered again.
	require.NoError(t, ws.RemoveIndex("team"))
	_, err = ws.QueryItems(ctx, teamA)
	require.ErrorIs(t, err, ErrIndexNotFound)
	assert.NotContains(t, inf.IndexNames(), "team")
}
