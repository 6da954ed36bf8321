package store

import (
	"slices"
	"strings"

	"github.com/kindex/kindex/query"
)

// Ordering of query results. A page is the first Limit results after the continue token's
// position in the order; the store selects them with a bounded heap instead of sorting the
// whole match set: O(M log L) for M matches and a page of L, then the page alone is sorted.

// order compares two results: by (namespace, name), or by a sort index's value first.
type order struct {
	byValue bool
	desc    bool
}

// sortValue is the value an object sorts by: its smallest value of the sort index (its
// largest when descending); has is false for an object without values, which sorts last.
type sortValue struct {
	has bool
	num number
	isN bool
	s   string
}

func newSortValue(values []string, desc bool) sortValue {
	var best sortValue
	for _, v := range values {
		sv := sortValue{has: true, s: v}
		sv.num, sv.isN = parseNumber(v)
		if !best.has {
			best = sv
			continue
		}
		if c := compareValues(sv, best); desc && c > 0 || !desc && c < 0 {
			best = sv
		}
	}
	return best
}

// compareValues orders values: numbers numerically (equal numbers written differently by
// their text), then query.NonScalar, then the other strings bytewise.
func compareValues(a, b sortValue) int {
	switch {
	case a.isN && b.isN:
		if c := a.num.Compare(b.num); c != 0 {
			return c
		}
		return strings.Compare(a.s, b.s)
	case a.isN:
		return -1
	case b.isN:
		return 1
	case a.s == b.s:
		return 0
	case a.s == query.NonScalar:
		return -1 // before every string, "" included
	case b.s == query.NonScalar:
		return 1
	}
	return strings.Compare(a.s, b.s)
}

// position is where a result sits in an order; a continue token holds the last one returned.
type position struct {
	val sortValue
	key string
}

func (o order) compare(a, b *position) int {
	if o.byValue {
		switch {
		case a.val.has != b.val.has:
			if a.val.has {
				return -1 // objects without a value come last in both directions
			}
			return 1
		case a.val.has:
			c := compareValues(a.val, b.val)
			if o.desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
	}
	return compareKeys(a.key, b.key)
}

// ranked is a result with its position.
type ranked struct {
	item Item
	pos  position
}

// selectPage returns the first limit results of items in order o (all of them, sorted, if
// limit is 0), without sorting the whole set when limit is smaller.
func selectPage(items []ranked, o order, limit int) []ranked {
	cmp := func(a, b *ranked) int { return o.compare(&a.pos, &b.pos) }
	if limit <= 0 || len(items) <= limit {
		if !o.byValue {
			sortRankedByKey(items)
		} else {
			slices.SortFunc(items, func(a, b ranked) int { return o.compare(&a.pos, &b.pos) })
		}
		return items
	}
	// A max-heap of the limit smallest so far: its root is the largest kept.
	h := items[:limit]
	for i := limit/2 - 1; i >= 0; i-- {
		siftDown(h, i, cmp)
	}
	for i := range items[limit:] {
		it := &items[limit+i]
		if cmp(it, &h[0]) < 0 {
			h[0] = *it
			siftDown(h, 0, cmp)
		}
	}
	slices.SortFunc(h, func(a, b ranked) int { return o.compare(&a.pos, &b.pos) })
	return h
}

func siftDown(h []ranked, i int, cmp func(a, b *ranked) int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		big := l
		if r := l + 1; r < len(h) && cmp(&h[r], &h[l]) > 0 {
			big = r
		}
		if cmp(&h[big], &h[i]) <= 0 {
			return
		}
		h[i], h[big] = h[big], h[i]
		i = big
	}
}

// sortRankedByKey sorts by (namespace, name); when every namespace has the same length that
// is the keys' byte order, which compares twice as fast.
func sortRankedByKey(items []ranked) {
	sameLength := true
	if len(items) > 0 {
		n := strings.IndexByte(items[0].item.Key, '/')
		for _, it := range items[1:] {
			if strings.IndexByte(it.item.Key, '/') != n {
				sameLength = false
				break
			}
		}
	}
	if sameLength {
		slices.SortFunc(items, func(a, b ranked) int { return strings.Compare(a.item.Key, b.item.Key) })
		return
	}
	slices.SortFunc(items, func(a, b ranked) int { return compareKeys(a.item.Key, b.item.Key) })
}

// orderOf is q's order.
func orderOf(q query.Query) order {
	return order{byValue: q.SortBy != "", desc: q.Descending}
}

// sortItemsByKey sorts items by (namespace, name), as sortRankedByKey.
func sortItemsByKey(items []Item) {
	sameLength := true
	if len(items) > 0 {
		n := strings.IndexByte(items[0].Key, '/')
		for _, it := range items[1:] {
			if strings.IndexByte(it.Key, '/') != n {
				sameLength = false
				break
			}
		}
	}
	if sameLength {
		slices.SortFunc(items, func(a, b Item) int { return strings.Compare(a.Key, b.Key) })
		return
	}
	slices.SortFunc(items, func(a, b Item) int { return compareKeys(a.Key, b.Key) })
}

// pageSel selects a page while candidates are walked: the first limit results after the
// position after in order o, kept in a bounded max-heap, so that a page from m matches holds
// limit results at most and costs O(m log limit).
type pageSel struct {
	o        order
	after    position
	hasAfter bool
	limit    int
	heap     []ranked
	matched  int // results after the position, whether kept or not
	// vals caches the sort value of each distinct value seen: values repeat across objects.
	vals map[string]sortValue
}

// offer considers a result; values are its sort index's (nil without SortBy).
func (p *pageSel) offer(it Item, values []string) {
	r := ranked{item: it, pos: position{key: it.Key}}
	if p.o.byValue {
		if len(values) == 1 {
			sv, ok := p.vals[values[0]]
			if !ok {
				sv = newSortValue(values, p.o.desc)
				if p.vals == nil {
					p.vals = map[string]sortValue{}
				}
				p.vals[values[0]] = sv
			}
			r.pos.val = sv
		} else {
			r.pos.val = newSortValue(values, p.o.desc)
		}
	}
	if p.hasAfter && p.o.compare(&r.pos, &p.after) <= 0 {
		return
	}
	p.matched++
	switch {
	case len(p.heap) < p.limit:
		p.heap = append(p.heap, r)
		if len(p.heap) == p.limit {
			for i := p.limit/2 - 1; i >= 0; i-- {
				siftDown(p.heap, i, p.cmp)
			}
		}
	case p.o.compare(&r.pos, &p.heap[0].pos) < 0:
		p.heap[0] = r
		siftDown(p.heap, 0, p.cmp)
	}
}

func (p *pageSel) cmp(a, b *ranked) int { return p.o.compare(&a.pos, &b.pos) }

// page returns the selected results in order.
func (p *pageSel) page() []ranked {
	slices.SortFunc(p.heap, func(a, b ranked) int { return p.o.compare(&a.pos, &b.pos) })
	return p.heap
}
