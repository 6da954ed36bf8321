package query_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kindex/kindex/internal/safecall"
	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/query"
)

func TestBadConditionsAreInvalidErrors(t *testing.T) {
	cases := []struct {
		name string
		c    query.Condition
		// want is a part of the message that names what is wrong.
		want string
	}{
		{"zero condition", query.Condition{}, "exactly one of an index name and a JSONPath"},
		{"empty index name", query.Eq("", "x"), "exactly one of"},
		{"index and path", query.Condition{Index: "a", Path: "{.a}", Op: query.Equal, Values: []string{"x"}}, "exactly one of"},
		{"zero op", query.Condition{Index: "a", Values: []string{"x"}}, "Op(0)"},
		{"unknown op", query.Condition{Index: "a", Op: query.Op(99), Values: []string{"x"}}, "Op(99)"},
		{"negative op", query.Condition{Index: "a", Op: query.Op(-1)}, "Op(-1)"},
		{"nil values for Equal", query.Condition{Index: "a", Op: query.Equal}, "takes one value, got 0"},
		{"two values for Equal", query.Condition{Index: "a", Op: query.Equal, Values: []string{"x", "y"}}, "got 2"},
		{"empty In", query.OneOf("a"), "in needs at least one value"},
		{"empty non-nil In", query.Condition{Index: "a", Op: query.In, Values: []string{}}, "at least one value"},
		{"Exists with a value", query.Condition{Index: "a", Op: query.Exists, Values: []string{"x"}}, "exists takes no value"},
		{"NotExists with a value", query.Condition{Index: "a", Op: query.NotExists, Values: []string{""}}, "!exists takes no value"},
		{"NonScalar Equal", query.Eq("a", query.NonScalar), "NonScalar"},
		{"NonScalar In", query.OneOf("a", "x", query.NonScalar), "NonScalar"},
		{"NonScalar NotEqual", query.NotEq("a", query.NonScalar), "NonScalar"},
		{"NonScalar Prefix", query.HasPrefix("a", query.NonScalar), "NonScalar"},
		{"Prefix without value", query.Condition{Index: "a", Op: query.Prefix}, "got 0"},
		{"bound not a number", query.Lt("a", "ten"), `"ten" is not a number`},
		{"empty bound", query.Gt("a", ""), `"" is not a number`},
		{"NaN bound", query.Ge("a", "NaN"), "finite"},
		{"Inf bound", query.Le("a", "-Inf"), "finite"},
		{"huge bound", query.Le("a", "1e999"), "out of range"},
		{"tiny bound", query.Le("a", "1e-400"), "too small"},
		{"numeric bound with space", query.Lt("a", " 1"), "not a number"},
		{"bad JSONPath", query.Where("{.a[", query.Exists), "bad JSONPath"},
		{"JSONPath with a NonScalar", query.Where("{.a}", query.Equal, query.NonScalar), "NonScalar"},
		{"Where without op", query.Where("{.a}", 0), "Op(0)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := safecall.Call(t, tc.c.Validate)
			if !errors.Is(err, query.ErrInvalidQuery) {
				t.Fatalf("Validate() = %v, want ErrInvalidQuery", err)
			}
			var inv *query.InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("Validate() = %T, want *query.InvalidError", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %q, want it to name %q", err, tc.want)
			}
			if errors.Is(err, query.ErrInvalidContinue) {
				t.Errorf("a bad condition matches ErrInvalidContinue: %v", err)
			}
			// The same condition in a query, in AnyOf, fails as well.
			for _, q := range []query.Query{
				{Conditions: []query.Condition{tc.c}},
				{AnyOf: [][]query.Condition{{query.Has("b")}, {tc.c}}},
			} {
				if err := safecall.Call(t, q.Validate); !errors.Is(err, query.ErrInvalidQuery) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("Query.Validate() = %v, want an ErrInvalidQuery naming %q", err, tc.want)
				}
			}
		})
	}
}

func TestBadJSONPathConditionHasTheSyntaxError(t *testing.T) {
	c := query.Where("{.metadata.labels[?(@.x==}", query.Exists)
	err := safecall.Call(t, c.Validate)
	var se *jsonpath.SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("Validate() = %v, want a *jsonpath.SyntaxError", err)
	}
}

func TestBadQueriesAreInvalidErrors(t *testing.T) {
	cases := []struct {
		name string
		q    query.Query
		want string
	}{
		{"negative limit", query.Query{Limit: -1}, "Limit must not be negative, got -1"},
		{"min int limit", query.Query{Limit: math.MinInt}, "Limit must not be negative"},
		{"descending without SortBy", query.Query{Descending: true}, "Descending needs SortBy"},
		{"empty AnyOf group", query.Query{AnyOf: [][]query.Condition{{}}}, "AnyOf group 0"},
		{"nil AnyOf group after a good one", query.Query{AnyOf: [][]query.Condition{{query.Has("a")}, nil}}, "AnyOf group 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := safecall.Call(t, tc.q.Validate)
			var inv *query.InvalidError
			if !errors.Is(err, query.ErrInvalidQuery) || !errors.As(err, &inv) {
				t.Fatalf("Validate() = %v, want an *InvalidError", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %q, want it to name %q", err, tc.want)
			}
		})
	}
	// What is fine: a huge Limit, an empty Prefix, a prefix of a number.
	for _, q := range []query.Query{
		{Limit: math.MaxInt, Conditions: []query.Condition{query.Has("a")}},
		{Conditions: []query.Condition{query.HasPrefix("a", "")}},
		{Conditions: []query.Condition{query.HasPrefix("a", "1")}},
		{SortBy: "no such index"},
		{Labels: labels.Nothing()},
	} {
		if err := safecall.Call(t, q.Validate); err != nil {
			t.Errorf("Validate(%+v) = %v, want nil", q, err)
		}
	}
}

func TestBadContinueTokensAreRefused(t *testing.T) {
	q := query.Query{Namespace: "ns", Conditions: []query.Condition{query.Eq("color", "red")}, Limit: 10,
		SortBy: "size"}
	const source = "widgets"
	token := query.EncodeContinue(q, source, "ns/w1")
	other := query.Query{Conditions: []query.Condition{query.Eq("color", "blue")}}
	otherToken := query.EncodeContinue(other, source, "ns/w1")
	rnd := rand.New(rand.NewPCG(51, 2))
	random := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rnd.UintN(256))
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	tokens := map[string]string{
		"garbage":                  "this is not a token",
		"one char":                 "A",
		"only a version byte":      base64.RawURLEncoding.EncodeToString([]byte{1}),
		"version and tag, no key":  base64.RawURLEncoding.EncodeToString(append([]byte{1}, make([]byte, 12)...)),
		"truncated by one":         token[:len(token)-1],
		"truncated to half":        token[:len(token)/2],
		"another query's":          otherToken,
		"std base64":               base64.StdEncoding.EncodeToString([]byte("\x01abcdefghijklmnop")),
		"NUL bytes":                "\x00\x00\x00\x00",
		"non-UTF-8":                "\xff\xfe\xfd",
		"huge":                     strings.Repeat("A", 1<<20),
		"random 13 bytes":          random(13),
		"random 64 bytes":          random(64),
		"random 4096 bytes":        random(4096),
		"token twice":              token + token,
		"spaces around":            " " + token + " ",
		"percent-encoded":          strings.ReplaceAll(token, "_", "%5F") + "%3D",
		"version 0":                base64.RawURLEncoding.EncodeToString(append([]byte{0}, make([]byte, 20)...)),
		"version 255 with a key":   base64.RawURLEncoding.EncodeToString(append([]byte{255}, []byte("0123456789abns/w1")...)),
		"the right key, no tag":    base64.RawURLEncoding.EncodeToString(append([]byte{1}, "ns/w1"...)),
		"another source's (empty)": query.EncodeContinue(q, "", "ns/w1"),
	}
	for name, tok := range tokens {
		t.Run(name, func(t *testing.T) {
			bad := q
			bad.Continue = tok
			var key string
			err := safecall.Call(t, func() error {
				var err error
				key, err = query.DecodeContinue(bad, source)
				return err
			})
			if !errors.Is(err, query.ErrInvalidContinue) || !errors.Is(err, query.ErrInvalidQuery) {
				t.Fatalf("DecodeContinue = %q, %v; want ErrInvalidContinue", key, err)
			}
			if len(err.Error()) > 1024 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
		})
	}
	// A random token of any length is refused (2^-96 aside).
	for n := 1; n < 200; n++ {
		bad := q
		bad.Continue = random(n)
		if _, err := query.DecodeContinue(bad, source); !errors.Is(err, query.ErrInvalidContinue) {
			t.Fatalf("random token of %d bytes: %v", n, err)
		}
	}
}

func TestOpStringOfAnyValue(t *testing.T) {
	for _, op := range []query.Op{0, -1, 11, 1000, query.Op(math.MinInt), query.Op(math.MaxInt)} {
		s := ""
		if err := safecall.Call(t, func() error { s = op.String() + query.Condition{Index: "a", Op: op}.String(); return nil }); err != nil {
			t.Fatal(err)
		}
		if op.Valid() || !strings.Contains(s, fmt.Sprintf("Op(%d)", int(op))) {
			t.Errorf("Op %d: %q, valid %v", int(op), s, op.Valid())
		}
	}
}
