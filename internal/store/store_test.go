package store

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/query"
)

func obj(ns, name string, size any, node string, lbls map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"namespace": ns, "name": name, "resourceVersion": "1"},
		"spec":     map[string]any{},
	}}
	if size != nil {
		u.Object["spec"].(map[string]any)["size"] = size
	}
	if node != "" {
		u.Object["spec"].(map[string]any)["node"] = node
	}
	if lbls != nil {
		u.SetLabels(lbls)
	}
	return u
}

// field indexes spec.<name> as text; a map value is an error the index counts.
func field(name string) IndexFunc {
	return func(o any) ([]string, error) {
		v, ok := o.(*unstructured.Unstructured).Object["spec"].(map[string]any)[name]
		switch v := v.(type) {
		case nil:
			if ok {
				return nil, nil
			}
			return nil, nil
		case map[string]any:
			return nil, errors.New("map value")
		case []any:
			var out []string
			for _, x := range v {
				out = append(out, fmt.Sprint(x))
			}
			return out, nil
		default:
			return []string{fmt.Sprint(v)}, nil
		}
	}
}

func keys(items []Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Key
	}
	return out
}

func TestAddIndexBackfillsAndFollowsUpdates(t *testing.T) {
	s := New(Options{})
	require.NoError(t, s.Add(obj("a", "x", int64(1), "n1", nil)))
	require.NoError(t, s.Add(obj("b", "y", int64(2), "n1", nil)))
	require.NoError(t, s.AddIndex("node", field("node")))

	got, err := s.IndexKeysIn("node", "n1", "", true)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"a/x", "b/y"}, got)

	// An update moves the object between values.
	require.NoError(t, s.Update(obj("a", "x", int64(1), "n2", nil)))
	got, _ = s.IndexKeysIn("node", "n1", "", true)
	assert.Equal(t, []string{"b/y"}, got)
	got, _ = s.IndexKeysIn("node", "n2", "", true)
	assert.Equal(t, []string{"a/x"}, got)

	// Namespaced lookups read one namespace.
	got, _ = s.IndexKeysIn("node", "n1", "a", false)
	assert.Empty(t, got)

	require.NoError(t, s.Delete(obj("b", "y", nil, "", nil)))
	got, _ = s.IndexKeysIn("node", "n1", "", true)
	assert.Empty(t, got)
	st, err := s.IndexStats("node")
	require.NoError(t, err)
	assert.Equal(t, 1, st.Values, "only n2 is left")
	got, _ = s.IndexKeysIn("node", "n2", "", true)
	assert.Len(t, got, 1)
}

func TestRemoveIndexIsReferenceCounted(t *testing.T) {
	s := New(Options{})
	require.NoError(t, s.AddIndex("node", field("node")))
	require.NoError(t, s.AddIndex("node", field("node")))
	gone, err := s.RemoveIndex("node")
	require.NoError(t, err)
	assert.False(t, gone)
	_, err = s.IndexKeysIn("node", "x", "", true)
	require.NoError(t, err, "still registered after one of two removals")
	gone, err = s.RemoveIndex("node")
	require.NoError(t, err)
	assert.True(t, gone)
	_, err = s.IndexKeysIn("node", "x", "", true)
	assert.ErrorIs(t, err, ErrIndexNotFound)
	_, err = s.RemoveIndex("node")
	assert.ErrorIs(t, err, ErrIndexNotFound)
}

func TestIndexFunctionFailureKeepsObject(t *testing.T) {
	s := New(Options{})
	require.NoError(t, s.AddIndex("size", field("size")))
	require.NoError(t, s.AddIndex("boom", func(any) ([]string, error) { panic("boom") }))
	require.NoError(t, s.Add(obj("a", "bad", map[string]any{"x": 1}, "", nil)))
	require.NoError(t, s.Add(obj("a", "good", int64(3), "", nil)))

	_, ok, _ := s.GetByKey("a/bad")
	assert.True(t, ok, "an object whose index function fails is still stored")
	st, err := s.IndexStats("size")
	require.NoError(t, err)
	assert.Equal(t, int64(1), st.Errors)
	assert.ErrorContains(t, st.LastError, "map value")
	st, _ = s.IndexStats("boom")
	assert.Equal(t, int64(2), st.Errors, "a panicking index function is counted, not propagated")
	got, _ := s.IndexKeysIn("size", "3", "", true)
	assert.Equal(t, []string{"a/good"}, got)
}

// An index function that fails on an object may return some of its values: the object
// matches positive conditions on those, and no negative one (NotEqual, NotExists), which
// need them all; the same path as a filter means the same. A later success clears it.
func TestPartialValuesMatchNoNegativeCondition(t *testing.T) {
	failing := true
	partial := func(o any) ([]string, error) {
		u := o.(*unstructured.Unstructured)
		if failing && u.GetName() == "partial" {
			return []string{"a"}, errors.New("out of budget after the first value")
		}
		return field("size")(o)
	}
	s := New(Options{})
	require.NoError(t, s.AddIndex("v", partial))
	require.NoError(t, s.Add(obj("ns", "partial", nil, "", nil)))
	require.NoError(t, s.Add(obj("ns", "b", "b", "", nil)))
	require.NoError(t, s.Add(obj("ns", "none", nil, "", nil)))
	opts := QueryOptions{PathFunc: func(string) (IndexFunc, error) { return partial, nil }}
	for _, tc := range []struct {
		cond query.Condition
		want []string
	}{
		{query.Eq("v", "a"), []string{"ns/partial"}},
		{query.Condition{Index: "v", Op: query.Exists}, []string{"ns/b", "ns/partial"}},
		{query.Condition{Index: "v", Op: query.NotExists}, []string{"ns/none"}},
		{query.NotEq("v", "b"), []string{"ns/none"}},
		{query.NotEq("v", "zzz"), []string{"ns/b", "ns/none"}},
		{query.HasPrefix("v", ""), []string{"ns/b", "ns/partial"}},
	} {
		indexed, _, _, err := s.Query(ctx, query.Query{Scan: true, Conditions: []query.Condition{tc.cond}}, opts)
		require.NoError(t, err)
		assert.Equal(t, tc.want, keys(indexed), "indexed %s", tc.cond)
		filter := query.Where("{.x}", tc.cond.Op, tc.cond.Values...)
		filtered, _, _, err := s.Query(ctx, query.Query{Scan: true, Conditions: []query.Condition{filter}}, opts)
		require.NoError(t, err)
		assert.Equal(t, tc.want, keys(filtered), "filtered %s", tc.cond)
		n, _, err := s.Count(ctx, query.Query{Scan: true, Conditions: []query.Condition{tc.cond}}, opts)
		require.NoError(t, err)
		assert.Equal(t, len(tc.want), n, "Count %s", tc.cond)
	}
	failing = false
	require.NoError(t, s.Update(obj("ns", "partial", nil, "", nil)))
	items, _, _, err := s.Query(ctx, query.Query{Scan: true, Conditions: []query.Condition{query.NotEq("v", "b")}}, opts)
	require.NoError(t, err)
	assert.Equal(t, []string{"ns/none", "ns/partial"}, keys(items), "a success clears the failure")
}

// dedupe leaves the slice an index function returned as it was.
func TestDedupeKeepsTheFunctionsSlice(t *testing.T) {
	shared := []string{"a", "a", "b"}
	s := New(Options{})
	require.NoError(t, s.AddIndex("v", func(any) ([]string, error) { return shared, nil }))
	require.NoError(t, s.Add(obj("ns", "x", nil, "", nil)))
	assert.Equal(t, []string{"a", "a", "b"}, shared)
	st, err := s.IndexStats("v")
	require.NoError(t, err)
	assert.Equal(t, 2, st.Entries, "each value once")
}

func TestReplaceRemovesMissingAndReindexes(t *testing.T) {
	s := New(Options{})
	require.NoError(t, s.AddIndex("node", field("node")))
	require.NoError(t, s.Add(obj("a", "x", nil, "n1", nil)))
	require.NoError(t, s.Add(obj("a", "y", nil, "n1", nil)))
	require.NoError(t, s.Replace([]any{obj("a", "y", nil, "n2", nil)}, "42"))
	assert.Equal(t, []string{"a/y"}, s.ListKeys())
	got, _ := s.IndexKeysIn("node", "n2", "", true)
	assert.Equal(t, []string{"a/y"}, got)
	st, err := s.IndexStats("node")
	require.NoError(t, err)
	assert.Equal(t, 1, st.Values, "only n2 is left")
	got, _ = s.IndexKeysIn("node", "n2", "", true)
	assert.Len(t, got, 1)
}

func TestDeleteTombstone(t *testing.T) {
	s := New(Options{})
	o := obj("a", "x", nil, "n1", nil)
	require.NoError(t, s.Add(o))
	require.NoError(t, s.Delete(cache.DeletedFinalStateUnknown{Key: "a/x", Obj: o}))
	assert.Equal(t, 0, s.Len())
}

func seed(t *testing.T) *Store {
	t.Helper()
	s := New(Options{})
	require.NoError(t, s.AddIndex("size", field("size")))
	require.NoError(t, s.AddIndex("node", field("node")))
	for i := range 20 {
		ns := []string{"a", "b"}[i%2]
		var size any = int64(i % 5)
		if i == 19 {
			size = "big" // not a number
		}
		node := fmt.Sprintf("n%d", i%3)
		if i%7 == 0 {
			node = ""
		}
		require.NoError(t, s.Add(obj(ns, fmt.Sprintf("o%02d", i), size, node, map[string]string{"even": fmt.Sprint(i%2 == 0)})))
	}
	return s
}

// brute evaluates q by brute force, for comparison with the planner.
func brute(s *Store, q query.Query) []string {
	var out []string
	for _, k := range s.ListKeys() {
		if q.Namespace != "" && NamespaceOf(k) != q.Namespace {
			continue
		}
		o, _, _ := s.GetByKey(k)
		ok := true
		for _, c := range q.Conditions {
			m, _ := newMatcher(c, nil)
			values, _ := field(c.Index)(o)
			ok = ok && m.match(values)
		}
		if q.Labels != nil {
			ok = ok && q.Labels.Matches(labels.Set(o.(*unstructured.Unstructured).GetLabels()))
		}
		if len(q.AnyOf) > 0 {
			anyOK := false
			for _, g := range q.AnyOf {
				all := true
				for _, c := range g {
					m, _ := newMatcher(c, nil)
					values, _ := field(c.Index)(o)
					all = all && m.match(values)
				}
				anyOK = anyOK || all
			}
			ok = ok && anyOK
		}
		if ok {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool { return keyLess(out[i], out[j]) })
	return out
}

func labelsOf(o any) map[string]string { return o.(*unstructured.Unstructured).GetLabels() }

func TestQueryMatchesBruteForce(t *testing.T) {
	s := seed(t)
	even := labels.SelectorFromSet(labels.Set{"even": "true"})
	cases := []query.Query{
		{Conditions: []query.Condition{query.Eq("size", "3")}},
		{Namespace: "a", Conditions: []query.Condition{query.Eq("size", "2")}},
		{Conditions: []query.Condition{query.OneOf("size", "1", "2"), query.Eq("node", "n1")}},
		{Conditions: []query.Condition{query.Gt("size", "2")}},
		{Conditions: []query.Condition{query.Le("size", "1"), query.NotEq("node", "n0")}},
		{Conditions: []query.Condition{query.Has("node"), query.Lt("size", "3")}},
		{Conditions: []query.Condition{query.Ge("size", "0"), query.HasNot("node")}},
		{Conditions: []query.Condition{query.Eq("size", "big")}},
		{Conditions: []query.Condition{query.Has("size")}, Labels: even},
		{Namespace: "b", Conditions: []query.Condition{query.HasNot("node")}, Scan: true},
		{Conditions: []query.Condition{query.HasPrefix("node", "n1")}},
		{Conditions: []query.Condition{query.HasPrefix("size", "")}},
		{AnyOf: [][]query.Condition{{query.Eq("size", "1")}, {query.Eq("node", "n2"), query.Gt("size", "2")}}},
		{Namespace: "a", Conditions: []query.Condition{query.Has("node")}, AnyOf: [][]query.Condition{{query.Eq("size", "0")}, {query.HasPrefix("size", "b")}}},
		{AnyOf: [][]query.Condition{{query.Eq("size", "3")}, {query.Eq("size", "3")}}}, // overlapping groups: once each
	}
	for _, q := range cases {
		t.Run(fmt.Sprint(q.Namespace, q.Conditions, q.AnyOf, q.Labels), func(t *testing.T) {
			items, next, _, err := s.Query(ctx, q, QueryOptions{Labels: labelsOf})
			require.NoError(t, err)
			assert.Empty(t, next)
			assert.Equal(t, brute(s, q), keys(items))
		})
	}
}

// An Exists or In condition alone, which one value's list answers when only one value
// matches in scope (an index of one value, one of In's values present), gives what the
// general path gives: the brute-force model's keys, in (namespace, name) order, and pages
// when the matches exceed the limit.
func TestQueryOneValueExistsAndIn(t *testing.T) {
	s := seed(t)
	require.NoError(t, s.AddIndex("flag", field("flag")))
	for i := range 12 {
		o := obj([]string{"a", "b", "c"}[i%3], fmt.Sprintf("f%02d", i), int64(i), "", nil)
		if i%4 != 1 {
			o.Object["spec"].(map[string]any)["flag"] = "on"
		}
		require.NoError(t, s.Add(o))
	}
	cases := []query.Query{
		{Conditions: []query.Condition{query.Has("flag")}},
		{Namespace: "b", Conditions: []query.Condition{query.Has("flag")}},
		{Namespace: "none", Conditions: []query.Condition{query.Has("flag")}},
		{Conditions: []query.Condition{query.Has("node")}}, // several values: the general path
		{Conditions: []query.Condition{query.OneOf("flag", "on", "off")}},
		{Conditions: []query.Condition{query.OneOf("size", "3", "3")}},
		{Namespace: "a", Conditions: []query.Condition{query.OneOf("size", "1", "nope")}},
		{Conditions: []query.Condition{query.OneOf("size", "1", "2")}},
		{Conditions: []query.Condition{query.OneOf("size", "nope")}},
	}
	for _, q := range cases {
		t.Run(fmt.Sprint(q.Namespace, q.Conditions), func(t *testing.T) {
			want := brute(s, q)
			items, next, plan, err := s.Query(ctx, q, QueryOptions{})
			require.NoError(t, err)
			assert.Empty(t, next)
			assert.Equal(t, want, append([]string(nil), keys(items)...))
			assert.Equal(t, len(want), plan.Matched)
			q.Limit = 2
			var got []string
			for range 20 {
				items, next, _, err := s.Query(ctx, q, QueryOptions{})
				require.NoError(t, err)
				got = append(got, keys(items)...)
				if next == "" {
					break
				}
				q.Continue = next
			}
			assert.Equal(t, want, got)
		})
	}
	_, _, _, err := s.Query(ctx, query.Query{Conditions: []query.Condition{query.Has("nope")}}, QueryOptions{})
	assert.ErrorIs(t, err, ErrIndexNotFound)
	_, _, _, err = s.Query(ctx, query.Query{Conditions: []query.Condition{{Index: "flag", Op: query.Exists, Values: []string{"on"}}}}, QueryOptions{})
	assert.ErrorIs(t, err, query.ErrInvalidQuery)
}

// Count and CountBy agree with the brute-force model on every query of the model test,
// whichever path answers them (index sizes or the match set).
func TestCountsMatchBruteForce(t *testing.T) {
	s := seed(t)
	even := labels.SelectorFromSet(labels.Set{"even": "true"})
	cases := []query.Query{
		{Scan: true},
		{Namespace: "a", Scan: true},
		{Conditions: []query.Condition{query.Eq("size", "3")}},
		{Namespace: "b", Conditions: []query.Condition{query.Eq("node", "n1")}},
		{Conditions: []query.Condition{query.OneOf("size", "1", "2"), query.Eq("node", "n1")}},
		{Conditions: []query.Condition{query.Gt("size", "2")}},
		{Conditions: []query.Condition{query.Has("size")}, Labels: even},
		{Namespace: "b", Conditions: []query.Condition{query.HasNot("node")}, Scan: true},
		{AnyOf: [][]query.Condition{{query.Eq("size", "1")}, {query.HasPrefix("node", "n2")}}},
	}
	for _, q := range cases {
		t.Run(fmt.Sprint(q.Namespace, q.Conditions, q.AnyOf, q.Labels), func(t *testing.T) {
			want := brute(s, q)
			n, _, err := s.Count(ctx, q, QueryOptions{Labels: labelsOf})
			require.NoError(t, err)
			assert.Equal(t, len(want), n)
			byNode, err := s.CountBy(ctx, q, "node", QueryOptions{Labels: labelsOf})
			require.NoError(t, err)
			model := map[string]int{}
			for _, k := range want {
				o, _, _ := s.GetByKey(k)
				vs, _ := field("node")(o)
				for _, v := range vs {
					model[v]++
				}
			}
			assert.Equal(t, model, byNode)
		})
	}
	n, _, err := s.Count(ctx, query.Query{}, QueryOptions{})
	require.NoError(t, err, "a count without conditions reads the store's size: no scan")
	assert.Equal(t, 20, n)
	_, err = s.CountBy(ctx, query.Query{}, "nope", QueryOptions{})
	assert.ErrorIs(t, err, ErrIndexNotFound)
}

func TestQueryPlansFromMostSelectiveIndex(t *testing.T) {
	s := seed(t)
	// size=4 has 3 objects (4, 9, 14), node=n1 has 6: the planner drives from size.
	_, _, plan, err := s.Query(ctx, query.Query{Conditions: []query.Condition{query.Eq("node", "n1"), query.Eq("size", "4")}}, QueryOptions{})
	require.NoError(t, err)
	assert.Equal(t, "size=4", plan.Driver)
	assert.Equal(t, 3, plan.Candidates)
}

func TestQueryPaginates(t *testing.T) {
	s := seed(t)
	q := query.Query{Conditions: []query.Condition{query.Has("size")}, Limit: 7}
	var all []string
	for page := 0; ; page++ {
		require.Less(t, page, 10)
		items, next, _, err := s.Query(ctx, q, QueryOptions{})
		require.NoError(t, err)
		require.LessOrEqual(t, len(items), 7)
		all = append(all, keys(items)...)
		if next == "" {
			break
		}
		q.Continue = next
	}
	assert.Equal(t, brute(s, query.Query{Conditions: []query.Condition{query.Has("size")}}), all)
	assert.Len(t, all, 20)
}

// Plan.Matched counts the matches that follow the continue token's position: those of the
// page and of the pages after it, whichever way the page is selected (from the driver's
// matches with a heap, or from the whole match set when a label selector filters it).
func TestPlanMatchedCountsFromTheContinuePosition(t *testing.T) {
	s := New(Options{})
	require.NoError(t, s.AddIndex("size", field("size")))
	require.NoError(t, s.AddIndex("node", field("node")))
	for i := range 30 {
		node := "common"
		if i%10 == 0 {
			node = "rare" // o00, o10, o20
		}
		require.NoError(t, s.Add(obj("a", fmt.Sprintf("o%02d", i), int64(30-i), node, map[string]string{"team": "x"})))
	}
	opts := QueryOptions{Labels: func(o any) map[string]string { return o.(*unstructured.Unstructured).GetLabels() }}
	rare := []query.Condition{query.Eq("node", "rare")}
	for name, tc := range map[string]struct {
		q    query.Query
		keys []string
	}{
		"key order":        {query.Query{Conditions: rare}, []string{"a/o00", "a/o10", "a/o20"}},
		"sorted":           {query.Query{Conditions: rare, SortBy: "size"}, []string{"a/o20", "a/o10", "a/o00"}},
		"labels":           {query.Query{Conditions: rare, Labels: labels.SelectorFromSet(labels.Set{"team": "x"})}, []string{"a/o00", "a/o10", "a/o20"}},
		"labels and order": {query.Query{Conditions: rare, SortBy: "size", Descending: true, Labels: labels.SelectorFromSet(labels.Set{"team": "x"})}, []string{"a/o00", "a/o10", "a/o20"}},
	} {
		t.Run(name, func(t *testing.T) {
			q := tc.q
			q.Limit = 1
			for page, want := range tc.keys {
				items, next, plan, err := s.Query(ctx, q, opts)
				require.NoError(t, err)
				assert.Equal(t, []string{want}, keys(items), "page %d", page)
				assert.Equal(t, len(tc.keys)-page, plan.Matched, "page %d: this page's match and those after it", page)
				assert.Equal(t, page < len(tc.keys)-1, next != "")
				q.Continue = next
			}
		})
	}
}

func TestQueryErrors(t *testing.T) {
	s := seed(t)
	cases := map[string]struct {
		q    query.Query
		want error
	}{
		"no index":           {query.Query{Conditions: []query.Condition{query.NotEq("node", "x")}}, query.ErrScanRequired},
		"unknown index":      {query.Query{Conditions: []query.Condition{query.Eq("nope", "x")}}, ErrIndexNotFound},
		"bad bound":          {query.Query{Conditions: []query.Condition{query.Lt("size", "ten")}}, query.ErrInvalidQuery},
		"empty in":           {query.Query{Conditions: []query.Condition{query.OneOf("size")}}, query.ErrInvalidQuery},
		"path unsupported":   {query.Query{Conditions: []query.Condition{query.Where("{.a}", query.Exists)}}, query.ErrInvalidQuery},
		"bad continue":       {query.Query{Conditions: []query.Condition{query.Has("size")}, Continue: "%%%"}, query.ErrInvalidQuery},
		"labels unsupported": {query.Query{Conditions: []query.Condition{query.Has("size")}, Labels: labels.SelectorFromSet(labels.Set{"a": "b"})}, query.ErrInvalidQuery},
		// A negative Limit returned every match; the equality fast path and the general
		// path both refuse it.
		"negative limit, equality": {query.Query{Conditions: []query.Condition{query.Eq("node", "n1")}, Limit: -1}, query.ErrInvalidQuery},
		"negative limit":           {query.Query{Conditions: []query.Condition{query.Has("size")}, Limit: -1}, query.ErrInvalidQuery},
		"negative limit, sorted":   {query.Query{Scan: true, SortBy: "size", Limit: -5}, query.ErrInvalidQuery},
		// NonScalar is no value: the equality fast path matched map- and list-valued fields.
		"non-scalar value":    {query.Query{Conditions: []query.Condition{query.Eq("node", query.NonScalar)}}, query.ErrInvalidQuery},
		"non-scalar in a set": {query.Query{Conditions: []query.Condition{query.OneOf("node", "n1", query.NonScalar)}}, query.ErrInvalidQuery},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, _, err := s.Query(ctx, tc.q, QueryOptions{})
			assert.ErrorIs(t, err, tc.want)
		})
	}
}

// A query refused for want of Scan says which AnyOf group lacks a positive indexed
// condition, in Query, Count and CountBy alike.
func TestScanRequiredNamesTheGroup(t *testing.T) {
	s := seed(t)
	q := query.Query{AnyOf: [][]query.Condition{{query.Has("size")}, {query.NotEq("node", "x"), query.HasNot("size")}}}
	_, _, _, err := s.Query(ctx, q, QueryOptions{})
	require.ErrorIs(t, err, query.ErrScanRequired)
	assert.EqualError(t, err, `query needs an index or an explicit scan: AnyOf group 1 "node!=x, !size": no positive indexed condition in it or in Conditions`)
	_, _, err = s.Count(ctx, q, QueryOptions{})
	assert.EqualError(t, err, `query needs an index or an explicit scan: AnyOf group 1 "node!=x, !size": no positive indexed condition in it or in Conditions`)
	_, err = s.CountBy(ctx, q, "size", QueryOptions{})
	require.ErrorIs(t, err, query.ErrScanRequired)
	assert.ErrorContains(t, err, `AnyOf group 1 "node!=x, !size"`)

	// User text is quoted cut, as query's errors quote it.
	huge := query.Query{AnyOf: [][]query.Condition{{query.NotEq("node", strings.Repeat("x", 10_000))}}}
	_, _, _, err = s.Query(ctx, huge, QueryOptions{})
	require.ErrorIs(t, err, query.ErrScanRequired)
	assert.Less(t, len(err.Error()), 500)
}

func TestQueryPathConditionFilters(t *testing.T) {
	s := seed(t)
	pathFunc := func(expr string) (IndexFunc, error) { return field(expr), nil }
	q := query.Query{Conditions: []query.Condition{query.Eq("size", "1"), query.Where("node", query.Equal, "n1")}}
	items, _, plan, err := s.Query(ctx, q, QueryOptions{PathFunc: pathFunc})
	require.NoError(t, err)
	assert.Equal(t, "size=1", plan.Driver)
	assert.Equal(t, brute(s, query.Query{Conditions: []query.Condition{query.Eq("size", "1"), query.Eq("node", "n1")}}), keys(items))
}

func TestConcurrentWritesAndQueries(t *testing.T) {
	s := seed(t)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				o := obj("c", fmt.Sprintf("w%d-%d", w, i%10), int64(i%5), "n1", nil)
				if i%3 == 0 {
					_ = s.Delete(o)
				} else {
					_ = s.Add(o)
				}
				_, _, _, err := s.Query(ctx, query.Query{Conditions: []query.Condition{query.Eq("node", "n1")}}, QueryOptions{})
				assert.NoError(t, err)
				if i == 100 {
					_ = s.AddIndex("tmp", field("size"))
					_, _ = s.RemoveIndex("tmp")
				}
			}
		}()
	}
	wg.Wait()
	// The index agrees with the objects after the storm.
	items, _, _, err := s.Query(ctx, query.Query{Namespace: "c", Conditions: []query.Condition{query.Eq("node", "n1")}}, QueryOptions{})
	require.NoError(t, err)
	assert.ElementsMatch(t, s.ListNamespaceKeys("c"), keys(items))
}

// keyed is a Keyed object whose key is its own string.
type keyed struct{ key, rv string }

func (k *keyed) StoreKey() string           { return k.key }
func (k *keyed) GetResourceVersion() string { return k.rv }

// TestKeyedObjectsKeepNoOldKey: a Keyed object's key is used as it is, and an update keeps
// the new object's key string, not the replaced one's (which would keep the replaced
// object's memory alive when the key is a view of it).
func TestKeyedObjectsKeepNoOldKey(t *testing.T) {
	s := New(Options{})
	first := &keyed{key: string([]byte("ns/a")), rv: "1"}
	require.NoError(t, s.Add(first))
	second := &keyed{key: string([]byte("ns/a")), rv: "2"}
	require.NoError(t, s.Update(second))

	got, ok, err := s.GetByKey("ns/a")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Same(t, second, got)
	require.Len(t, s.items, 1)
	for k, rec := range s.items {
		assert.Same(t, unsafe.StringData(second.key), unsafe.StringData(k), "the map holds the new key")
		assert.Same(t, unsafe.StringData(second.key), unsafe.StringData(rec.key), "the record holds the new key")
	}
	assert.Equal(t, []string{"ns/a"}, s.ListNamespaceKeys("ns"))
	assert.Equal(t, []any{second}, s.ListNamespace("ns"))

	key, err := KeyFunc(cache.DeletedFinalStateUnknown{Key: "ns/gone"})
	require.NoError(t, err)
	assert.Equal(t, "ns/gone", key)
	key, err = KeyFunc(obj("ns", "u", nil, "", nil))
	require.NoError(t, err)
	assert.Equal(t, "ns/u", key)
	require.NoError(t, s.Delete(second))
	assert.Empty(t, s.ListNamespace("ns"))
	assert.Empty(t, s.byNS)
}

// TestNamespacesSplitOnlyWhenASecondAppears: a store holding one namespace keeps no
// per-namespace set, and listing by namespace is right before, during and after the split.
func TestNamespacesSplitOnlyWhenASecondAppears(t *testing.T) {
	s := New(Options{})
	keys := func(ns string) []string {
		k := s.ListNamespaceKeys(ns)
		sort.Strings(k)
		return k
	}
	for _, n := range []string{"x", "y"} {
		require.NoError(t, s.Add(obj("a", n, nil, "", nil)))
	}
	assert.Nil(t, s.byNS, "one namespace: no sets")
	assert.Equal(t, []string{"a/x", "a/y"}, keys("a"))
	assert.Empty(t, keys("b"))
	assert.Empty(t, keys(""))
	assert.Len(t, s.ListNamespace("a"), 2)

	require.NoError(t, s.Add(obj("b", "z", nil, "", nil)))
	require.NotNil(t, s.byNS, "a second namespace splits")
	assert.Equal(t, []string{"a/x", "a/y"}, keys("a"))
	assert.Equal(t, []string{"b/z"}, keys("b"))
	items, _, _, err := s.Query(ctx, query.Query{Namespace: "b", Scan: true}, QueryOptions{})
	require.NoError(t, err)
	require.Len(t, items, 1)
	assert.Equal(t, "b/z", items[0].Key)

	for _, k := range []string{"a/x", "a/y", "b/z"} {
		require.NoError(t, s.Delete(cache.DeletedFinalStateUnknown{Key: k}))
	}
	assert.Nil(t, s.byNS, "an empty store starts over")
	require.NoError(t, s.Add(obj("c", "w", nil, "", nil)))
	assert.Equal(t, []string{"c/w"}, keys("c"))
	assert.Empty(t, keys("a"))
	items, _, _, err = s.Query(ctx, query.Query{Namespace: "a", Scan: true}, QueryOptions{})
	require.NoError(t, err)
	assert.Empty(t, items)
	items, _, _, err = s.Query(ctx, query.Query{Namespace: "c", Scan: true}, QueryOptions{})
	require.NoError(t, err)
	assert.Len(t, items, 1)
}

// A continue token works only for the query and store it came from, and only unmodified.
func TestContinueTokensAreBound(t *testing.T) {
	s := seed(t)
	q := query.Query{Conditions: []query.Condition{query.Has("size")}, Limit: 3}
	opts := QueryOptions{Scope: "widgets"}
	_, next, _, err := s.Query(ctx, q, opts)
	require.NoError(t, err)
	require.NotEmpty(t, next)
	q.Continue = next
	_, _, _, err = s.Query(ctx, q, opts)
	require.NoError(t, err)

	other := q
	other.Conditions = []query.Condition{query.Has("node")}
	raw, err := base64.RawURLEncoding.DecodeString(next)
	require.NoError(t, err)
	flipped := append([]byte{}, raw...)
	flipped[len(flipped)/2] ^= 1
	for name, tc := range map[string]struct {
		q    query.Query
		opts QueryOptions
	}{
		"another query":    {other, opts},
		"another informer": {q, QueryOptions{Scope: "gadgets"}},
		"modified":         {withContinue(q, base64.RawURLEncoding.EncodeToString(flipped)), opts},
		"garbage base64":   {withContinue(q, base64.RawURLEncoding.EncodeToString([]byte("a/o05"))), opts},
		"not base64":       {withContinue(q, "%%%"), opts},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, _, err := s.Query(ctx, tc.q, tc.opts)
			require.ErrorIs(t, err, ErrInvalidContinue)
			assert.ErrorIs(t, err, query.ErrInvalidQuery)
		})
	}
}

func withContinue(q query.Query, token string) query.Query {
	q.Continue = token
	return q
}

// ctx is the context of the tests' queries.
var ctx = context.Background()

// A scan stops within 64 filter evaluations of its context's end.
func TestScanStopsWithItsContext(t *testing.T) {
	s := New(Options{})
	for i := range 10000 {
		require.NoError(t, s.Add(obj("a", fmt.Sprintf("o%05d", i), int64(i), "", nil)))
	}
	cctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	opts := QueryOptions{PathFunc: func(string) (IndexFunc, error) {
		return func(any) ([]string, error) {
			if calls++; calls == 100 {
				cancel()
			}
			return []string{"x"}, nil
		}, nil
	}}
	_, _, _, err := s.Query(cctx, query.Query{Scan: true, Conditions: []query.Condition{query.Where("{.x}", query.Exists)}}, opts)
	require.ErrorIs(t, err, context.Canceled)
	assert.LessOrEqual(t, calls, 100+64)
}

// Every AnyOf group must be answerable from an index, or the query must say Scan.
func TestAnyOfNeedsAnIndexPerGroup(t *testing.T) {
	s := seed(t)
	q := query.Query{AnyOf: [][]query.Condition{{query.Eq("size", "1")}, {query.HasNot("node")}}}
	_, _, _, err := s.Query(ctx, q, QueryOptions{})
	assert.ErrorIs(t, err, query.ErrScanRequired)
	q.Scan = true
	items, _, _, err := s.Query(ctx, q, QueryOptions{})
	require.NoError(t, err)
	assert.Equal(t, brute(s, q), keys(items))
	_, _, _, err = s.Query(ctx, query.Query{AnyOf: [][]query.Condition{{}}}, QueryOptions{})
	assert.ErrorIs(t, err, query.ErrInvalidQuery)
}
