package store

import (
	"errors"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

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

// FuzzLabelSelector: a label selector a user typed either fails to parse (apimachinery's
// error) or selects, through the store's query, exactly the objects apimachinery's own
// matcher selects, with or without an indexed condition; never a panic.
func FuzzLabelSelector(f *testing.F) {
	s := New(Options{})
	if err := s.AddIndex("size", field("size")); err != nil {
		f.Fatal(err)
	}
	sets := []map[string]string{nil, {"app": "web"}, {"app": "db", "tier": "back"}, {"tier": ""}, {"app": "web", "env": "prod"}, {"x.io/y": "1"}}
	for i, l := range sets {
		if err := s.Add(obj([]string{"a", "b"}[i%2], fmt.Sprint("o", i), int64(i%3), "", l)); err != nil {
			f.Fatal(err)
		}
	}
	for _, seed := range []string{"", "app=web", "app!=web", "app in (web,db)", "!tier", "tier", "app,tier=back",
		"env notin (prod)", "x.io/y=1", "app==web,", "a=b=c", "in (", "=", "!", "app in ()"} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	f.Fuzz(func(t *testing.T, text string, indexed bool) {
		sel, err := labels.Parse(text)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("an empty error for %q", text)
			}
			return
		}
		q := query.Query{Scan: true, Labels: sel}
		if indexed {
			q = query.Query{Labels: sel, Conditions: []query.Condition{query.Has("size")}}
		}
		items, _, _, err := s.Query(ctx, q, QueryOptions{Labels: func(o any) map[string]string {
			return o.(*unstructured.Unstructured).GetLabels()
		}})
		if err != nil {
			t.Fatalf("query with selector %q: %v", text, err)
		}
		got := map[string]bool{}
		for _, it := range items {
			got[it.Key] = true
		}
		for _, o := range s.List() {
			u := o.(*unstructured.Unstructured)
			key := u.GetNamespace() + "/" + u.GetName()
			if want := sel.Matches(labels.Set(u.GetLabels())); want != got[key] {
				t.Fatalf("selector %q on %s %v: store says %v, apimachinery %v", text, key, u.GetLabels(), got[key], want)
			}
		}
	})
}
