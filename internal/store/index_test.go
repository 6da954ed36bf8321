package store

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kindex/kindex/query"
)

// valueEntry grows from one inline key to a slice to a map, and splits into one such list
// per namespace, and shrinks back by removals: every form must answer like a plain map of
// namespace to keys.
func TestValueEntryMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 60 {
		e := &valueEntry{}
		model := map[string]map[string]bool{}
		recs := map[string]*record{}
		rec := func(key string) *record {
			if recs[key] == nil {
				recs[key] = newRecord(key, nil)
			}
			return recs[key]
		}
		nsCount := 1 + round%3                     // some rounds stay in one namespace
		keyRange := []int{4, 3 * splitAt}[round%2] // some grow past the slice form
		for range 300 {
			ns := fmt.Sprint("ns", rng.IntN(nsCount))
			if nsCount == 3 && rng.IntN(4) == 0 {
				ns = "" // cluster-scoped keys
			}
			key := ns + "/k" + fmt.Sprint(rng.IntN(keyRange))
			if rng.IntN(5) < 3 { // grow more than shrink
				_, had := model[ns][key]
				require.Equal(t, !had, e.insert(rec(key), ns))
				if model[ns] == nil {
					model[ns] = map[string]bool{}
				}
				model[ns][key] = true
			} else {
				_, had := model[ns][key]
				require.Equal(t, had, e.remove(rec(key), ns))
				delete(model[ns], key)
			}
			total := 0
			for ns, keys := range model {
				total += len(keys)
				require.Equal(t, len(keys), e.count(ns, false))
				require.Equal(t, sorted(keys), collect(e, ns, false))
			}
			require.Equal(t, total, e.count("", true))
			require.Len(t, collect(e, "", true), total)
			require.Equal(t, 0, e.count("other", false))
		}
	}
}

func sorted(m map[string]bool) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func collect(e *valueEntry, ns string, all bool) []string {
	out := []string{}
	e.each(ns, all, func(r *record) { out = append(out, r.key) })
	sort.Strings(out)
	return out
}

// An object with several values is a candidate once, whichever of its values the driver
// reads; results are ordered by namespace, then name ('-' sorts before '/' in a key).
func TestQueryMultiValuedDriverListsObjectsOnce(t *testing.T) {
	s := New(Options{})
	tags := func(o any) ([]string, error) {
		v, _, _ := unstructured.NestedStringSlice(o.(*unstructured.Unstructured).Object, "spec", "tags")
		return v, nil
	}
	require.NoError(t, s.AddIndex("tags", tags))
	for _, o := range []struct {
		ns, name string
		tags     []string
	}{{"a-b", "x", []string{"1", "2", "3"}}, {"a", "y", []string{"2"}}, {"a", "z", []string{"5"}}} {
		u := obj(o.ns, o.name, nil, "", nil)
		require.NoError(t, unstructured.SetNestedStringSlice(u.Object, o.tags, "spec", "tags"))
		require.NoError(t, s.Add(u))
	}
	for _, q := range []query.Query{
		{Conditions: []query.Condition{query.OneOf("tags", "1", "2", "3")}},
		{Conditions: []query.Condition{query.Lt("tags", "4")}},
		{Conditions: []query.Condition{query.Has("tags"), query.NotEq("tags", "5")}},
	} {
		items, _, plan, err := s.Query(ctx, q, QueryOptions{})
		require.NoError(t, err)
		require.Equal(t, []string{"a/y", "a-b/x"}, keys(items), "%v", q.Conditions)
		require.Equal(t, 2, plan.Matched)
	}
}

// Indexes removed and added while objects are stored reuse record slots without mixing
// their values.
func TestIndexSlotsAreReused(t *testing.T) {
	s := New(Options{})
	for i := range 6 {
		require.NoError(t, s.Add(obj("a", fmt.Sprint("o", i), int64(i%3), fmt.Sprint("n", i%2), nil)))
	}
	require.NoError(t, s.AddIndex("size", field("size")))
	require.NoError(t, s.AddIndex("node", field("node")))
	_, err := s.RemoveIndex("size")
	require.NoError(t, err)
	require.NoError(t, s.Add(obj("a", "o6", int64(2), "n0", nil)))
	require.NoError(t, s.AddIndex("size2", field("size"))) // takes the free slot
	require.NoError(t, s.Add(obj("a", "o7", int64(2), "n1", nil)))
	require.NoError(t, s.Update(obj("a", "o0", int64(2), "n1", nil)))
	for _, tc := range []struct {
		q    query.Condition
		want []string
	}{
		{query.Eq("size2", "2"), []string{"a/o0", "a/o2", "a/o5", "a/o6", "a/o7"}},
		{query.Eq("node", "n1"), []string{"a/o0", "a/o1", "a/o3", "a/o5", "a/o7"}},
	} {
		items, _, _, err := s.Query(ctx, query.Query{Conditions: []query.Condition{tc.q, query.Has("node"), query.Has("size2")}}, QueryOptions{})
		require.NoError(t, err)
		require.Equal(t, tc.want, keys(items), "%v", tc.q)
	}
	_, _, _, err = s.Query(ctx, query.Query{Conditions: []query.Condition{query.Eq("size", "2")}}, QueryOptions{})
	require.ErrorIs(t, err, ErrIndexNotFound)
}

func TestCompareKeysOrdersByNamespaceThenName(t *testing.T) {
	ordered := []string{"a", "b", "a/z", "a-b/a", "ab/a", "ab/b", "b/a", "team-1/x", "team-10/a", "team-2/a"}
	for i, a := range ordered {
		for j, b := range ordered {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			require.Equal(t, want, compareKeys(a, b), "%s vs %s", a, b)
			require.Equal(t, want, compareRecords(newRecord(a, nil), newRecord(b, nil)), "records %s vs %s", a, b)
		}
	}
}

// compareRecords agrees with compareKeys on random keys: namespaces of many lengths that
// are prefixes of each other, cluster-scoped keys among them, and probes ("ns/", "").
func TestCompareRecordsAgreesWithCompareKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		const alphabet = "ab-0"
		b := make([]byte, rng.IntN(4))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	key := func() string {
		if rng.IntN(5) == 0 {
			return word()
		}
		return word() + "/" + word()
	}
	for range 20000 {
		a, b := key(), key()
		require.Equal(t, compareKeys(a, b), compareRecords(newRecord(a, nil), newRecord(b, nil)), "%q vs %q", a, b)
	}
}
