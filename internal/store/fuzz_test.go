package store

import (
	"errors"
	"testing"

	"github.com/kindex/kindex/query"
)

// FuzzContinue: a continue token the store did not issue for the query, in key order or
// sorted by a value, is refused with ErrInvalidContinue (never a panic, never a page from
// some other place); a token it issued works.
func FuzzContinue(f *testing.F) {
	s := New(Options{})
	if err := s.AddIndex("size", field("size")); err != nil {
		f.Fatal(err)
	}
	for i, size := range []any{int64(3), "x", nil, int64(-1), int64(3)} {
		if err := s.Add(obj("ns", string(rune('a'+i)), size, "", nil)); err != nil {
			f.Fatal(err)
		}
	}
	queries := []query.Query{
		{Conditions: []query.Condition{query.Has("size")}, Limit: 1},
		{Scan: true, SortBy: "size", Limit: 2},
		{Scan: true, SortBy: "size", Descending: true, Limit: 1},
	}
	var issued []string
	for _, q := range queries {
		_, next, _, err := s.Query(ctx, q, QueryOptions{Scope: "s"})
		if err != nil || next == "" {
			f.Fatal(err, next)
		}
		issued = append(issued, next)
		f.Add(next, uint8(len(issued)-1))
	}
	f.Add("", uint8(0))
	f.Add("AQ", uint8(1))
	f.Add("\r"+issued[0], uint8(0)) // base64 decoders skip line breaks
	f.Fuzz(func(t *testing.T, token string, which uint8) {
		q := queries[int(which)%len(queries)]
		q.Continue = token
		_, _, _, err := s.Query(ctx, q, QueryOptions{Scope: "s"})
		if err == nil {
			if token != "" && token != issued[int(which)%len(queries)] {
				t.Fatalf("accepted a token the store did not issue for this query: %q", token)
			}
			return
		}
		if !errors.Is(err, ErrInvalidContinue) {
			t.Fatalf("error of the wrong kind: %v", err)
		}
	})
}
