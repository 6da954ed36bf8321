package store

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
