package informer

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/query"
)

// queryEnv caches 40 widgets: namespaces a and b, colors red/blue/green, tiers web/db
// (labels), generation 1..10, and indexes color, tier and gen.
func queryEnv(t *testing.T) *Informer[obj] {
	t.Helper()
	e := newEnv(t, Options[obj]{})
	srv := e.mode.server(widgets.GVR)
	for i := range 40 {
		o := colored([]string{"a", "b"}[i%2], fmt.Sprintf("w%02d", i), []string{"red", "blue", "green"}[i%3])
		o.Labels["tier"] = []string{"web", "db"}[i%4/2]
		o.Generation = int64(i%10 + 1)
		srv.add(o)
	}
	inf, err := e.f.Informer(context.Background(), "widgets")
	require.NoError(t, err)
	t.Cleanup(inf.Release)
	require.NoError(t, inf.WaitForSync(context.Background()))
	require.NoError(t, inf.AddIndex("color", "{.metadata.labels.color}"))
	require.NoError(t, inf.AddIndex("tier", "{.metadata.labels.tier}"))
	require.NoError(t, inf.AddIndex("gen", "{.metadata.generation}"))
	return inf
}

// keysOf returns "namespace/name" of each object, in order.
func keysOf(objs []obj) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.Namespace+"/"+o.Name)
	}
	return out
}

// expect filters the cache by hand, in (namespace, name) order.
func expect(inf *Informer[obj], ns string, keep func(o obj) bool) []string {
	var out []string
	for _, ns2 := range []string{"a", "b"} {
		for i := range 40 {
			o, err := inf.Get(ns2, fmt.Sprintf("w%02d", i))
			if err != nil || (ns != "" && ns != ns2) || !keep(o) {
				continue
			}
			out = append(out, ns2+"/"+o.Name)
		}
	}
	return out
}

func TestQueryOperatorsMatchAFilterByHand(t *testing.T) {
	inf := queryEnv(t)
	web := labels.SelectorFromSet(labels.Set{"tier": "web"})
	cases := []struct {
		name   string
		q      query.Query
		keep   func(o obj) bool
		driver string
	}{
		{"equal", query.Query{Conditions: []query.Condition{query.Eq("color", "red")}},
			func(o obj) bool { return o.Labels["color"] == "red" }, "color=red"},
		{"in", query.Query{Conditions: []query.Condition{query.OneOf("color", "red", "green")}},
			func(o obj) bool { return o.Labels["color"] != "blue" }, "color in (red,green)"},
		{"not equal after equal", query.Query{Conditions: []query.Condition{query.Eq("tier", "db"), query.NotEq("color", "red")}},
			func(o obj) bool { return o.Labels["tier"] == "db" && o.Labels["color"] != "red" }, "tier=db"},
		{"exists", query.Query{Conditions: []query.Condition{query.Has("gen")}},
			func(o obj) bool { return true }, "gen"},
		{"not exists", query.Query{Conditions: []query.Condition{query.Has("color"), query.HasNot("gen")}},
			func(o obj) bool { return false }, "color"},
		{"less than", query.Query{Conditions: []query.Condition{query.Lt("gen", "3")}},
			func(o obj) bool { return o.Generation < 3 }, "gen<3"},
		{"less or equal", query.Query{Conditions: []query.Condition{query.Le("gen", "3")}},
			func(o obj) bool { return o.Generation <= 3 }, "gen<=3"},
		{"greater than", query.Query{Conditions: []query.Condition{query.Gt("gen", "8")}},
			func(o obj) bool { return o.Generation > 8 }, "gen>8"},
		{"greater or equal, float bound", query.Query{Conditions: []query.Condition{query.Ge("gen", "8.5")}},
			func(o obj) bool { return o.Generation >= 9 }, "gen>=8.5"},
		{"and: most selective drives", query.Query{Conditions: []query.Condition{query.Eq("tier", "web"), query.Eq("gen", "4")}},
			func(o obj) bool { return o.Labels["tier"] == "web" && o.Generation == 4 }, "gen=4"},
		{"labels", query.Query{Conditions: []query.Condition{query.Eq("color", "blue")}, Labels: web},
			func(o obj) bool { return o.Labels["color"] == "blue" && o.Labels["tier"] == "web" }, "color=blue"},
		{"namespace", query.Query{Namespace: "b", Conditions: []query.Condition{query.Eq("color", "red")}},
			func(o obj) bool { return o.Namespace == "b" && o.Labels["color"] == "red" }, "color=red"},
		{"where after index", query.Query{Conditions: []query.Condition{query.Eq("color", "red"), query.Where("{.metadata.generation}", query.GreaterThan, "5")}},
			func(o obj) bool { return o.Labels["color"] == "red" && o.Generation > 5 }, "color=red"},
		{"where scan", query.Query{Scan: true, Conditions: []query.Condition{query.Where("{.metadata.name}", query.In, "w01", "w02")}},
			func(o obj) bool { return o.Name == "w01" || o.Name == "w02" }, "scan"},
		{"namespaced scan", query.Query{Scan: true, Namespace: "a"},
			func(o obj) bool { return o.Namespace == "a" }, "scan"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := inf.Query(context.Background(), tc.q)
			require.NoError(t, err)
			want := expect(inf, tc.q.Namespace, tc.keep)
			if want == nil {
				want = []string{}
			}
			assert.Equal(t, want, keysOf(res.Items))
			assert.Equal(t, tc.driver, res.Plan.Driver, "plan in the user's names")
			assert.Equal(t, len(want), res.Plan.Matched)
			assert.Empty(t, res.Continue)
		})
	}
}

// A namespaced query reads only that namespace's index entries, never a scan.
func TestNamespacedQueryReadsOneNamespace(t *testing.T) {
	inf := queryEnv(t)
	all, err := inf.Query(context.Background(), query.Query{Conditions: []query.Condition{query.Eq("color", "red")}})
	require.NoError(t, err)
	one, err := inf.Query(context.Background(), query.Query{Namespace: "a", Conditions: []query.Condition{query.Eq("color", "red")}})
	require.NoError(t, err)
	assert.Equal(t, 14, all.Plan.Candidates)
	assert.Equal(t, 7, one.Plan.Candidates, "candidates come from namespace a only")
	assert.Equal(t, "color=red", one.Plan.Driver)
}

// A namespace lister of "" (metav1.NamespaceAll) lists every namespace, as client-go's
// namespace listers do and as ListItems("") and a Query without a namespace do: a program
// whose namespace flag defaults to "" must not find nothing.
func TestNamespaceListerOfAllNamespaces(t *testing.T) {
	inf := queryEnv(t)
	all, err := inf.List(nil)
	require.NoError(t, err)
	require.Len(t, all, 40)
	got, err := inf.Namespace(metav1.NamespaceAll).List(nil)
	require.NoError(t, err)
	assert.ElementsMatch(t, keysOf(all), keysOf(got))
	items, err := inf.ListItems(metav1.NamespaceAll)
	require.NoError(t, err)
	assert.Len(t, items, 40)
	red, err := inf.Namespace("").List(labels.SelectorFromSet(labels.Set{"color": "red"}))
	require.NoError(t, err)
	assert.Len(t, red, 14)
	a, err := inf.Namespace("a").List(nil)
	require.NoError(t, err)
	assert.Len(t, a, 20)
}

// Get and GetItem of a namespace or name with a '/' find nothing: Get("", "b/w01") is not
// namespace b's w01, which a caller that checked the namespace it was given ("", for a
// cluster-scoped lookup) would otherwise read. A huge name makes a short NotFound.
func TestGetOfANameWithASlash(t *testing.T) {
	inf := queryEnv(t)
	_, err := inf.Get("b", "w01")
	require.NoError(t, err, "the object exists")
	for _, k := range [][2]string{{"", "b/w01"}, {"b/", "w01"}, {"", "/b/w01"}} {
		_, err = inf.Get(k[0], k[1])
		assert.True(t, apierrors.IsNotFound(err), "Get(%q, %q): %v", k[0], k[1], err)
		_, err = inf.GetItem(k[0], k[1])
		assert.True(t, apierrors.IsNotFound(err), "GetItem(%q, %q): %v", k[0], k[1], err)
		_, err = inf.Namespace(k[0]).Get(k[1])
		assert.True(t, apierrors.IsNotFound(err), "Namespace(%q).Get(%q): %v", k[0], k[1], err)
	}
	_, err = inf.Get("b", strings.Repeat("x", 100_000))
	assert.True(t, apierrors.IsNotFound(err))
	assert.Less(t, len(err.Error()), 2000)
}

func TestQueryPagesInOrder(t *testing.T) {
	inf := queryEnv(t)
	q := query.Query{Conditions: []query.Condition{query.OneOf("color", "red", "blue")}, Limit: 4}
	var got []string
	for pages := 0; ; pages++ {
		require.Less(t, pages, 20)
		res, err := inf.Query(context.Background(), q)
		require.NoError(t, err)
		require.LessOrEqual(t, len(res.Items), 4)
		got = append(got, keysOf(res.Items)...)
		if res.Continue == "" {
			break
		}
		q.Continue = res.Continue
	}
	assert.Equal(t, expect(inf, "", func(o obj) bool { return o.Labels["color"] != "green" }), got)
}

func TestQueryErrors(t *testing.T) {
	inf := queryEnv(t)
	_, err := inf.Query(context.Background(), query.Query{Conditions: []query.Condition{query.Eq("size", "1")}})
	require.ErrorIs(t, err, ErrIndexNotFound)
	assert.Contains(t, err.Error(), `"size"`)

	_, err = inf.Query(context.Background(), query.Query{Conditions: []query.Condition{query.NotEq("color", "red")}})
	assert.ErrorIs(t, err, query.ErrScanRequired, "no positive indexed condition")
	_, err = inf.Query(context.Background(), query.Query{Conditions: []query.Condition{query.Where("{.metadata.name}", query.Equal, "w01")}})
	assert.ErrorIs(t, err, query.ErrScanRequired, "a JSONPath condition alone scans")

	_, err = inf.Query(context.Background(), query.Query{Conditions: []query.Condition{query.Lt("gen", "three")}})
	require.ErrorIs(t, err, query.ErrInvalidQuery)
	assert.Contains(t, err.Error(), "gen<three", "the condition as the user wrote it")

	_, err = inf.Query(context.Background(), query.Query{Scan: true, Conditions: []query.Condition{query.Where("{.metadata[}", query.Exists)}})
	require.ErrorIs(t, err, query.ErrInvalidQuery)
	var se *jsonpath.SyntaxError
	assert.ErrorAs(t, err, &se)

	_, err = inf.Query(context.Background(), query.Query{Scan: true, Continue: "!!"})
	assert.ErrorIs(t, err, query.ErrInvalidQuery)
}

func TestCompiledPathsAreCached(t *testing.T) {
	var pc pathCache
	pa, a, err := pc.compile("{.metadata.name}")
	require.NoError(t, err)
	pb, b, err := pc.compile("{.metadata.name}")
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("%p", a), fmt.Sprintf("%p", b), "compiled once")
	assert.Same(t, pa, pb)
}

// Query filters run with Options.QueryJSONPath's budget, indexes with IndexJSONPath's: the
// same expression can be refused as a filter and accepted as an index.
func TestQueryAndIndexBudgetsAreSeparate(t *testing.T) {
	e := newEnv(t, Options[obj]{QueryJSONPath: jsonpath.Options{MaxSteps: 5}})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	srv.add(newObj("ns", "a", map[string]string{"a": "1", "b": "2", "c": "3", "d": "4"}))
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(ctx))
	require.NoError(t, inf.AddIndex("labels", "{.metadata.labels.*}"))
	st, err := inf.IndexStats("labels")
	require.NoError(t, err)
	assert.Equal(t, 4, st.Values, "the index has the default budget")
	assert.Zero(t, st.Errors)
	// The filter runs out of its 5 steps: what it found before is real (the object has
	// values: Exists), but not all of them (NotExists and NotEqual, which need all, fail).
	for op, want := range map[query.Op][]string{query.Exists: {"a"}, query.NotExists: {}} {
		res, err := inf.Query(ctx, query.Query{Scan: true, Conditions: []query.Condition{query.Where("{..*}", op)}})
		require.NoError(t, err)
		assert.Equal(t, want, names(res.Items), "%s", op)
	}
}

// An object whose values a path cannot all give (its evaluation runs out of budget) means
// the same to an index on the path and to the path as a filter: it matches a positive
// condition on the values given (none here: the 20,000 labels are more values than the
// budget's results), and never NotEqual or NotExists, which need them all. (The index
// counted it as having no value, so that !exists and != 19999 selected it though it has a
// label of value 19999, while the filter left it out.)
func TestAnObjectWhosePathFailsMeansTheSameIndexedAndFiltered(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	many := map[string]string{}
	for i := range 20000 {
		many[fmt.Sprintf("k%05d", i)] = strconv.Itoa(i)
	}
	srv.add(newObj("ns", "big", many))
	srv.add(newObj("ns", "small", map[string]string{"a": "1", "b": "2", "c": "3"}))
	srv.add(newObj("ns", "none", nil))
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(ctx))
	const path = "{.metadata.labels.*}"
	require.NoError(t, inf.AddIndex("l", path))
	st, err := inf.IndexStats("l")
	require.NoError(t, err)
	assert.EqualValues(t, 1, st.Errors, "the object the path failed on is counted")
	require.ErrorIs(t, st.LastError, jsonpath.ErrBudgetExceeded)

	for _, tc := range []struct {
		op     query.Op
		values []string
		want   []string
	}{
		{query.Exists, nil, []string{"small"}},
		{query.NotExists, nil, []string{"none"}},
		{query.Equal, []string{"1"}, []string{"small"}},
		{query.NotEqual, []string{"19999"}, []string{"none", "small"}},
		{query.NotEqual, []string{"1"}, []string{"none"}},
		{query.GreaterOrEqual, []string{"0"}, []string{"small"}},
		{query.In, []string{"2", "19999"}, []string{"small"}},
	} {
		indexed, err := inf.Query(ctx, query.Query{Scan: true, Conditions: []query.Condition{{Index: "l", Op: tc.op, Values: tc.values}}})
		require.NoError(t, err)
		filtered, err := inf.Query(ctx, query.Query{Scan: true, Conditions: []query.Condition{query.Where(path, tc.op, tc.values...)}})
		require.NoError(t, err)
		assert.Equal(t, tc.want, names(indexed.Items), "indexed %s %v", tc.op, tc.values)
		assert.Equal(t, tc.want, names(filtered.Items), "filtered %s %v", tc.op, tc.values)
		n, err := inf.Count(ctx, query.Query{Scan: true, Conditions: []query.Condition{{Index: "l", Op: tc.op, Values: tc.values}}})
		require.NoError(t, err)
		assert.Equal(t, len(tc.want), n, "Count %s %v", tc.op, tc.values)
	}

	// Once the object's labels fit the budget, it is an object like any other.
	srv.update(newObj("ns", "big", map[string]string{"k": "19999"}))
	eventually(t, func() bool {
		res, err := inf.Query(ctx, query.Query{Conditions: []query.Condition{{Index: "l", Op: query.NotEqual, Values: []string{"1"}}}, Scan: true})
		return err == nil && slices.Equal(names(res.Items), []string{"big", "none"})
	}, "an update that succeeds clears the failure")
}

// A query stops when its context ends, within a bounded number of candidates.
func TestQueryHonoursContext(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	srv := e.mode.server(widgets.GVR)
	for i := range 3000 {
		srv.add(newObj("ns", fmt.Sprintf("o%04d", i), nil))
	}
	inf, err := e.f.Informer(context.Background(), "widgets")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(context.Background()))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = inf.Query(ctx, query.Query{Scan: true, Conditions: []query.Condition{query.Where("{.metadata.name}", query.Exists)}})
	assert.ErrorIs(t, err, context.Canceled)
	_, err = inf.Count(ctx, query.Query{Scan: true, Conditions: []query.Condition{query.Where("{.metadata.name}", query.Exists)}})
	assert.ErrorIs(t, err, context.Canceled)
	require.NoError(t, inf.AddIndex("name", "{.metadata.name}"))
	_, err = inf.CountBy(ctx, query.Query{Scan: true, Conditions: []query.Condition{query.Where("{.metadata.name}", query.Exists)}}, "name")
	assert.ErrorIs(t, err, context.Canceled)
}

// In the compact mode, where Query decodes each result after the walk, the decoding stops
// when the context ends too: a page of 100,000 results takes seconds to decode.
func TestQueryDecodingHonoursContext(t *testing.T) {
	mode := newFakeMode()
	mode.decodes = true
	e := newEnvMode(t, mode, Options[obj]{}, hooks{})
	srv := e.mode.server(widgets.GVR)
	for i := range 1000 {
		srv.add(newObj("ns", fmt.Sprintf("o%04d", i), nil))
	}
	inf, err := e.f.Informer(context.Background(), "widgets")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(context.Background()))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	decoded := cancelOnDecode(t, mode, cancel)
	_, err = inf.Query(ctx, query.Query{Scan: true})
	assert.ErrorIs(t, err, context.Canceled)
	assert.LessOrEqual(t, decoded.Load(), int32(decodeCheckEvery), "decoding stopped within one check")
}

// cancelOnDecode makes mode call cancel at its first decode (the context ends during it),
// and returns the count of decodes, for tests of reads that must stop decoding then.
func cancelOnDecode(t *testing.T, mode *fakeMode, cancel context.CancelFunc) *atomic.Int32 {
	var decoded atomic.Int32
	stop := func() {
		decoded.Add(1)
		cancel()
	}
	mode.onObject.Store(&stop)
	t.Cleanup(func() { mode.onObject.Store(nil) })
	return &decoded
}
