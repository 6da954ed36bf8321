package query_test

import (
	"encoding/base64"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kindex/kindex/query"
)

func TestContinueTokens(t *testing.T) {
	q := query.Query{
		Namespace:  "prod",
		Conditions: []query.Condition{query.Gt("size", "2"), query.OneOf("color", "red", "blue")},
		Labels:     labels.SelectorFromSet(labels.Set{"tier": "web"}),
		Limit:      50,
	}
	const source = "widgets.v1.example.com"
	token := query.EncodeContinue(q, source, "prod/w-17")
	assert.NotContains(t, token, "=", "unpadded")

	next := q
	next.Continue = token
	key, err := query.DecodeContinue(next, source)
	require.NoError(t, err)
	assert.Equal(t, "prod/w-17", key)

	// The same query written differently, or with another page size, accepts the token.
	same := next
	same.Limit = 10
	same.Scan = true
	same.Conditions = []query.Condition{query.OneOf("color", "blue", "red", "blue"), query.Gt("size", "2")}
	key, err = query.DecodeContinue(same, source)
	require.NoError(t, err)
	assert.Equal(t, "prod/w-17", key)

	first, err := query.DecodeContinue(q, source)
	require.NoError(t, err)
	assert.Empty(t, first, "no token: the first page")

	other := func(f func(q *query.Query)) query.Query {
		o := next
		o.Conditions = append([]query.Condition(nil), next.Conditions...)
		f(&o)
		return o
	}
	bad := map[string]struct {
		q      query.Query
		source string
	}{
		"another namespace":  {other(func(q *query.Query) { q.Namespace = "dev" }), source},
		"another condition":  {other(func(q *query.Query) { q.Conditions[0] = query.Gt("size", "3") }), source},
		"one more condition": {other(func(q *query.Query) { q.Conditions = append(q.Conditions, query.Has("owner")) }), source},
		"another operator":   {other(func(q *query.Query) { q.Conditions[0].Op = query.GreaterOrEqual }), source},
		"index or path":      {other(func(q *query.Query) { q.Conditions[0] = query.Where("size", query.GreaterThan, "2") }), source},
		"another selector":   {other(func(q *query.Query) { q.Labels = labels.Everything() }), source},
		"another cache":      {next, "widgets.v1.other.com"},
		// Valid base64url that is not a token: it used to return the first page.
		"garbage":      {other(func(q *query.Query) { q.Continue = "Z2FyYmFnZQ" }), source},
		"long garbage": {other(func(q *query.Query) { q.Continue = "AQAAAAAAAAAAAAAAAHByb2QvdzE" }), source},
		"not base64":   {other(func(q *query.Query) { q.Continue = "not a token!" }), source},
		"padded":       {other(func(q *query.Query) { q.Continue = token + "==" }), source},
		// Base64 decoders skip line breaks, even Go's strict one: another spelling.
		"a leading CR":     {other(func(q *query.Query) { q.Continue = "\r" + token }), source},
		"an inner LF":      {other(func(q *query.Query) { q.Continue = token[:4] + "\n" + token[4:] }), source},
		"another key":      {other(func(q *query.Query) { q.Continue = retarget(t, token, "prod/w-99") }), source},
		"truncated":        {other(func(q *query.Query) { q.Continue = token[:len(token)-2] }), source},
		"unknown version":  {other(func(q *query.Query) { q.Continue = "Ag" + token[2:] }), source},
		"one flipped byte": {other(func(q *query.Query) { q.Continue = flip(t, token, 5) }), source},
	}
	// A token of a descending order by "size" was accepted for an order by an index named
	// "size desc": the identity wrote the two as the same text.
	desc := q
	desc.SortBy, desc.Descending = "size", true
	desc.Continue = query.EncodeContinue(desc, source, "prod/w-17")
	named := desc
	named.SortBy, named.Descending = "size desc", false
	bad["another sort index"] = struct {
		q      query.Query
		source string
	}{named, source}
	ascending := desc
	ascending.Descending = false
	bad["another direction"] = struct {
		q      query.Query
		source string
	}{ascending, source}
	for name, tt := range bad {
		t.Run(name, func(t *testing.T) {
			_, err := query.DecodeContinue(tt.q, tt.source)
			require.ErrorIs(t, err, query.ErrInvalidContinue)
			require.ErrorIs(t, err, query.ErrInvalidQuery)
			assert.NotContains(t, err.Error(), "prod/w", "the message does not echo the token")
		})
	}
}

// retarget rewrites the key in a token, keeping its tag.
func retarget(t *testing.T, token, key string) string {
	b := decode(t, token)
	return encode(append(b[:13:13], key...))
}

// flip changes one byte of a token.
func flip(t *testing.T, token string, i int) string {
	b := decode(t, token)
	b[i] ^= 1
	return encode(b)
}

func TestContinueErrorIsNotAnInvalidCondition(t *testing.T) {
	_, err := query.DecodeContinue(query.Query{Continue: "AAAA"}, "")
	var inv *query.InvalidError
	assert.False(t, errors.As(err, &inv))
	assert.True(t, errors.Is(err, query.ErrInvalidContinue))
}

func decode(t *testing.T, token string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(token)
	require.NoError(t, err)
	return b
}

func encode(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// FuzzDecodeContinue: no panic; any token that is not one EncodeContinue made for the query
// is refused with ErrInvalidContinue; every key round-trips.
func FuzzDecodeContinue(f *testing.F) {
	q := query.Query{Namespace: "ns", Conditions: []query.Condition{query.Eq("a", "b")}}
	valid := query.EncodeContinue(q, "src", "ns/name")
	f.Add(valid, "ns/name")
	f.Add("", "x/y")
	f.Add("Z2FyYmFnZQ", "a")
	f.Add(valid[:len(valid)-1], "/")
	f.Fuzz(func(t *testing.T, token, key string) {
		p := q
		p.Continue = token
		got, err := query.DecodeContinue(p, "src")
		switch {
		case token == "":
			if err != nil || got != "" {
				t.Fatalf("empty token: %q, %v", got, err)
			}
		case err == nil:
			if token != query.EncodeContinue(q, "src", got) {
				t.Fatalf("accepted %q, which was not issued for the query (key %q)", token, got)
			}
		case !errors.Is(err, query.ErrInvalidContinue):
			t.Fatalf("error of the wrong kind: %v", err)
		}
		if key == "" {
			return
		}
		p.Continue = query.EncodeContinue(q, "src", key)
		if got, err := query.DecodeContinue(p, "src"); err != nil || got != key {
			t.Fatalf("key %q came back as %q, %v", key, got, err)
		}
		if _, err := query.DecodeContinue(p, "other"); !errors.Is(err, query.ErrInvalidContinue) {
			t.Fatalf("a token of another source was accepted: %v", err)
		}
	})
}
