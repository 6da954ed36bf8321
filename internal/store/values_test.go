package store

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kindex/kindex/query"
)

// A value too small for a float64 ("1e-400", which would round to 0) is not a number, as
// ParseNumber refuses it as a bound: no comparison matches it, where it matched "<= 0" and
// not "> 0", and it sorts with the strings.
func TestTooSmallValuesAreNotNumbers(t *testing.T) {
	s := New(Options{})
	require.NoError(t, s.AddIndex("size", field("size")))
	for name, size := range map[string]any{"zero": int64(0), "tiny": "1e-400", "minus-tiny": "-1e-400", "one": "1"} {
		require.NoError(t, s.Add(obj("ns", name, size, "", nil)))
	}
	for _, cs := range [][]query.Condition{
		{query.Le("size", "0")}, {query.Lt("size", "0.5")}, {query.Gt("size", "-1"), query.Lt("size", "1")},
	} {
		items, _, _, err := s.Query(ctx, query.Query{Conditions: cs}, QueryOptions{})
		require.NoError(t, err)
		assert.Equal(t, []string{"ns/zero"}, keys(items), "%v", cs)
	}
	items, _, _, err := s.Query(ctx, query.Query{Conditions: []query.Condition{query.Gt("size", "0")}}, QueryOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"ns/one"}, keys(items))
	items, _, _, err = s.Query(ctx, query.Query{Scan: true, SortBy: "size"}, QueryOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"ns/zero", "ns/one", "ns/minus-tiny", "ns/tiny"}, keys(items), "numbers first, then the strings")
}

// In a SortBy order an object whose value is a map or a list (query.NonScalar) comes after
// the numbers and before every other string, the empty string included (it came after
// ""), in the order a page is read from as well as in a sorted match set.
func TestNonScalarSortsBeforeEveryString(t *testing.T) {
	s := New(Options{})
	require.NoError(t, s.AddIndex("v", func(o any) ([]string, error) {
		switch v := o.(*unstructured.Unstructured).Object["spec"].(map[string]any)["v"].(type) {
		case nil:
			return nil, nil
		case map[string]any:
			return []string{query.NonScalar}, nil
		default:
			return []string{fmt.Sprint(v)}, nil
		}
	}))
	values := map[string]any{"empty": "", "map": map[string]any{}, "a": "a", "one": int64(1), "nul": "\x00a", "none": nil}
	for name, v := range values {
		require.NoError(t, s.Add(obj("ns", name, nil, "", nil)))
		o, _, _ := s.GetByKey("ns/" + name)
		u := o.(*unstructured.Unstructured).DeepCopy()
		if v != nil {
			u.Object["spec"].(map[string]any)["v"] = v
		}
		require.NoError(t, s.Update(u))
	}
	want := map[bool][]string{
		false: {"ns/one", "ns/map", "ns/empty", "ns/nul", "ns/a", "ns/none"},
		true:  {"ns/a", "ns/nul", "ns/empty", "ns/map", "ns/one", "ns/none"},
	}
	for _, desc := range []bool{false, true} {
		for _, limit := range []int{0, 1, 2} {
			q := query.Query{Scan: true, SortBy: "v", Descending: desc, Limit: limit}
			var got []string
			for range len(values) + 1 {
				items, next, _, err := s.Query(ctx, q, QueryOptions{Scope: "s"})
				require.NoError(t, err)
				got = append(got, keys(items)...)
				if next == "" {
					break
				}
				q.Continue = next
			}
			assert.Equal(t, want[desc], got, "descending %v, limit %d", desc, limit)
		}
	}
}
