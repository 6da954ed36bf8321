package informer

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/internal/store/querymodel"
	"github.com/kindex/kindex/query"
)

// TestWatchAllQueriesAgreeWithTheModel is a randomized differential test of queries across
// a watch-all set against package querymodel, resource by resource: resources whose names
// sort around '-' and '.', namespaces and names likewise, indexes whose values are strings
// that look like numbers, unicode in two forms, "", multi-valued (a list's elements), lists
// and maps (query.NonScalar), and fields that appear and disappear as objects change; random
// queries (every operator, AnyOf, sort keys both ways, pages) in the set's order (by
// resource, then the query's), Count, CountBy, an index added and another removed at run time, and
// pages of one while objects change between them: an object present and unchanged
// throughout is returned exactly once, each page after the position of the last.
func TestWatchAllQueriesAgreeWithTheModel(t *testing.T) {
	for seed := uint64(1); seed <= 2; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { watchAllModelSeed(t, seed) })
	}
}

// setPos is where a result of a query across a set sits: its resource, then its place in
// the query's order.
type setPos struct {
	res string
	key querymodel.SortKey
}

func (p setPos) after(q query.Query, cursor *setPos) bool {
	if cursor == nil || p.res != cursor.res {
		return cursor == nil || p.res > cursor.res
	}
	return querymodel.CompareKeys(q, p.key, cursor.key) > 0
}

func watchAllModelSeed(t *testing.T, seed uint64) {
	rs := []discovery.Resource{resource("", "v1", "things"), resource("a.com", "v1", "w"), resource("a-b.com", "v1", "w"),
		resource("a.com", "v1", "w-x"), resource("a.com", "v1", "ws")}
	e := newEnv(t, Options[obj]{}, rs...)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, 7))
	g := querymodel.NewGen(seed)

	field := func(k string) querymodel.Seg { return querymodel.Seg{Kind: querymodel.Field, Key: k} }
	md := field("metadata")
	paths := map[string]querymodel.Path{
		"v":    {Segs: []querymodel.Seg{md, field("annotations"), field("v")}},
		"fin":  {Segs: []querymodel.Seg{md, field("finalizers"), {Kind: querymodel.Wildcard}}},
		"finl": {Segs: []querymodel.Seg{md, field("finalizers")}},
		"gen":  {Segs: []querymodel.Seg{md, field("generation")}},
		"team": {Segs: []querymodel.Seg{md, field("labels"), field("team")}},
		"lbl":  {Segs: []querymodel.Seg{md, field("labels")}},
	}
	// One model per resource, and one of every object for the generator's values.
	models, all := map[string]*querymodel.Model{}, querymodel.New()
	byName := map[string]discovery.Resource{}
	var names []string
	for _, res := range rs {
		name := resourceName(res.GVR.GroupResource())
		names = append(names, name)
		models[name], byName[name] = querymodel.New(), res
	}
	slices.Sort(names)
	index := func(name string) {
		for _, m := range append(slices.Collect(maps.Values(models)), all) {
			m.Indexes[name] = paths[name]
		}
	}

	values := []string{"", "a", "A", "ab", "a b", "\u00e9", "e\u0301", "\u65e5\u672c", "0", "7", "07", "7.0", "-0", "1e3", "NaN",
		"true", "null", "-2.5", "a/b", "a-b"}
	finalizers := []string{"x", "y", "x/y", "x-y", "7", "7.0", ""}
	namespaces := []string{"a", "a-b", "a.b", "ab", "b"}
	object := func(ns, name string) obj {
		o := newObj(ns, name, nil)
		if r.IntN(3) > 0 {
			o.Annotations = map[string]string{"v": values[r.IntN(len(values))]}
		}
		for range r.IntN(4) {
			o.Finalizers = append(o.Finalizers, finalizers[r.IntN(len(finalizers))]) // repeats too
		}
		o.Generation = int64(r.IntN(5) - 1) // 0 is left out of the JSON
		if r.IntN(2) == 0 {
			o.Labels = map[string]string{"team": values[r.IntN(5)]}
		}
		return o
	}
	server := func(res string) *fakeServer { return e.mode.server(byName[res].GVR) }
	put := func(res string, o obj, change func(obj)) {
		t.Helper()
		change(o)
		data, err := json.Marshal(o)
		require.NoError(t, err)
		for _, m := range []*querymodel.Model{models[res], all} {
			_, err := m.Put(data)
			require.NoError(t, err)
		}
	}
	for i := range 60 {
		res := names[r.IntN(len(names))]
		o := object(namespaces[r.IntN(len(namespaces))], fmt.Sprintf("o%d%s", i, []string{"", "-a", ".a", "a"}[r.IntN(4)]))
		put(res, o, server(res).add)
	}

	ws, err := e.f.WatchAll(ctx, discovery.Filter{})
	require.NoError(t, err)
	defer ws.Stop()
	require.NoError(t, ws.WaitForSync(ctx))
	// cached: every member holds what its server does, at the same resourceVersions.
	cached := func() bool {
		for _, name := range names {
			inf, ok := ws.Informer(byName[name].GVR.GroupResource())
			if !ok {
				return false
			}
			items, err := inf.ListItems("")
			if err != nil {
				return false
			}
			s := server(name)
			s.mu.Lock()
			same := len(items) == len(s.objs)
			for _, it := range items {
				if o := s.objs[it.Key()]; o == nil || o.ResourceVersion != it.ResourceVersion() {
					same = false
				}
			}
			s.mu.Unlock()
			if !same {
				return false
			}
		}
		return true
	}
	indexes := []string{"v", "fin", "finl", "gen", "team"}
	for _, name := range indexes {
		require.NoError(t, ws.AddIndex(name, paths[name].String()))
		index(name)
	}

	expect := func(q query.Query) ([]string, []setPos) {
		var keys []string
		var pos []setPos
		for _, name := range names {
			m := models[name]
			for _, k := range m.Results(q) {
				keys = append(keys, name+" "+k)
				pos = append(pos, setPos{name, m.Key(m.Objects[k], q)})
			}
		}
		return keys, pos
	}
	resultKey := func(it ResourceItem[obj]) string {
		return resourceName(it.Resource.GVR.GroupResource()) + " " + it.Key()
	}
	opts := querymodel.QueryOptions{Indexes: indexes, Namespaces: namespaces}
	for n := range 100 {
		if n == 40 {
			require.NoError(t, ws.AddIndex("lbl", paths["lbl"].String()))
			index("lbl")
			require.NoError(t, ws.RemoveIndex("finl"))
			_, err := ws.QueryItems(ctx, query.Query{Conditions: []query.Condition{query.Has("finl")}})
			require.ErrorIs(t, err, ErrIndexNotFound, "an index the set removed")
			opts.Indexes = []string{"v", "fin", "lbl", "gen", "team"}
		}
		q := g.Query(all, opts)
		want := all.Check(q)
		var got []string
		page := q
		for range 500 {
			var res query.Result[ResourceItem[obj]]
			if res, err = ws.QueryItems(ctx, page); err != nil {
				break
			}
			for _, it := range res.Items {
				got = append(got, resultKey(it))
			}
			if page.Continue = res.Continue; page.Continue == "" {
				break
			}
		}
		require.Empty(t, querymodel.CheckOutcome(want, err), "%d: %s", n, querymodel.Describe(q))
		if err != nil {
			continue
		}
		exp, _ := expect(q)
		require.Equal(t, exp, got, "%d: %s", n, querymodel.Describe(q))
		count, err := ws.Count(ctx, q)
		require.NoError(t, err, "%d: count %s", n, querymodel.Describe(q))
		require.Equal(t, len(exp), count, "%d: count %s", n, querymodel.Describe(q))
		// Counts per value of an index, summed over the resources.
		by := opts.Indexes[n%len(opts.Indexes)]
		wantBy := map[string]int{}
		for _, name := range names {
			for v, c := range models[name].CountBy(q, by) {
				wantBy[v] += c
			}
		}
		gotBy, err := ws.CountBy(ctx, q, by)
		require.NoError(t, err, "%d: count by %s %s", n, by, querymodel.Describe(q))
		require.Equal(t, wantBy, gotBy, "%d: count by %s %s", n, by, querymodel.Describe(q))

		if n%4 != 0 {
			continue
		}
		// Pages of one while objects change between them.
		pq := q
		pq.Limit = 1
		before, _ := expect(pq)
		unchanged := map[string]bool{}
		for _, k := range before {
			unchanged[k] = true
		}
		seen := map[string]bool{}
		var cursor *setPos
		for step := 0; ; step++ {
			require.Less(t, step, 300, "%d: pages of %s", n, querymodel.Describe(pq))
			res, err := ws.QueryItems(ctx, pq)
			require.NoError(t, err)
			for _, it := range res.Items {
				k := resultKey(it)
				require.False(t, seen[k] && unchanged[k], "%d: %s returned twice by %s", n, k, querymodel.Describe(pq))
				seen[k] = true
				name := resourceName(it.Resource.GVR.GroupResource())
				o := models[name].Objects[it.Key()]
				require.NotNil(t, o, "%d: %s is not cached", n, k)
				require.True(t, models[name].Matches(o, pq), "%d: %s does not match %s", n, k, querymodel.Describe(pq))
				p := setPos{name, models[name].Key(o, pq)}
				require.True(t, p.after(pq, cursor), "%d: %s is not after %+v", n, k, cursor)
				cursor = &p
			}
			if pq.Continue = res.Continue; pq.Continue == "" {
				break
			}
			for range 2 {
				name := names[r.IntN(len(names))]
				keys := slices.Sorted(maps.Keys(models[name].Objects))
				switch c := r.IntN(3); {
				case c < 2 && len(keys) > 0:
					k := keys[r.IntN(len(keys))]
					delete(unchanged, name+" "+k)
					ns, objName, _ := strings.Cut(k, "/")
					if c == 0 {
						server(name).remove(newObj(ns, objName, nil))
						models[name].Delete(k)
						all.Delete(k)
					} else {
						put(name, object(ns, objName), server(name).update)
					}
				default:
					o := object(namespaces[r.IntN(len(namespaces))], fmt.Sprintf("n%d-%d", n, r.IntN(1000)))
					delete(unchanged, name+" "+objKey(o))
					put(name, o, server(name).add)
				}
			}
			eventually(t, cached, "the set caches the changes")
		}
		for k := range unchanged {
			require.True(t, seen[k], "%d: %s, present and unchanged throughout, never returned by %s", n, k, querymodel.Describe(pq))
		}
	}
}
