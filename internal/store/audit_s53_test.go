package store

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/kindex/kindex/query"
)

// A page sorted by a value in descending order costs what the same page costs in ascending
// order: the descending walk read each value with two tree searches of its own (and their
// allocations), so a page sorted by a value few objects share cost several times the
// ascending page.
func TestAuditS53DescendingPageAllocations(t *testing.T) {
	s := New(Options{})
	if err := s.AddIndex("size", field("size")); err != nil {
		t.Fatal(err)
	}
	for i := range 4000 {
		if err := s.Add(obj(fmt.Sprintf("ns-%d", i%10), fmt.Sprintf("o-%05d", i), int64(1000+i), "", nil)); err != nil {
			t.Fatal(err)
		}
	}
	page := func(desc bool) float64 {
		q := query.Query{Conditions: []query.Condition{query.Has("size")}, SortBy: "size", Descending: desc, Limit: 100}
		if _, _, _, err := s.Query(ctx, q, QueryOptions{}); err != nil { // orders the index
			t.Fatal(err)
		}
		return testing.AllocsPerRun(20, func() {
			items, next, plan, err := s.Query(ctx, q, QueryOptions{})
			if err != nil || len(items) != 100 || next == "" || plan.Driver != "order(size)" {
				t.Fatal(err, len(items), plan.Driver)
			}
		})
	}
	asc, desc := page(false), page(true)
	if desc > asc+20 {
		t.Fatalf("a descending page of 100 made %.0f allocations, an ascending one %.0f", desc, asc)
	}
}

// Pages in descending order give every object once, values largest first, each value's
// objects in (namespace, name) order, for values with one object and with more than the
// walk keeps at a time.
func TestAuditS53DescendingPagesOrder(t *testing.T) {
	s := New(Options{})
	if err := s.AddIndex("size", field("size")); err != nil {
		t.Fatal(err)
	}
	type want struct {
		size int
		key  string
	}
	var all []want
	i := 0
	for size, count := range map[int]int{1: 1, 2: 3, 3: 64, 4: 65, 5: 200, 6: 1, 7: 130, 8: 2} {
		for range count {
			ns, name := fmt.Sprintf("ns-%d", i%7), fmt.Sprintf("o-%05d", (i*7919)%100000)
			i++
			if err := s.Add(obj(ns, name, int64(size), "", nil)); err != nil {
				t.Fatal(err)
			}
			all = append(all, want{size, ns + "/" + name})
		}
	}
	slices.SortFunc(all, func(a, b want) int {
		if a.size != b.size {
			return b.size - a.size
		}
		return compareKeys(a.key, b.key)
	})
	q := query.Query{Conditions: []query.Condition{query.Has("size")}, SortBy: "size", Descending: true}
	for _, limit := range []int{1, 7, 64, 65, 100, 1000} {
		q.Limit, q.Continue = limit, ""
		var got []want
		for {
			items, next, _, err := s.Query(ctx, q, QueryOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range items {
				vs, _ := field("size")(it.Obj)
				size, _ := strconv.Atoi(vs[0])
				got = append(got, want{size, it.Key})
			}
			if next == "" {
				break
			}
			q.Continue = next
		}
		if !slices.Equal(got, all) {
			t.Fatalf("limit %d: %d results, want %d; first difference at %d", limit, len(got), len(all), firstDiff(got, all))
		}
	}
}

func firstDiff[T comparable](a, b []T) int {
	for k := range min(len(a), len(b)) {
		if a[k] != b[k] {
			return k
		}
	}
	return min(len(a), len(b))
}
