package store

import (
	"github.com/google/btree"
)

// Ordered structures: a page read in order instead of selected from the whole match set.
//
// The store keeps every record in a B-tree in (namespace, name) order, and an index that a
// query has sorted by keeps its (value, record) pairs in a B-tree in the sort order (from
// the first such query on; index.ordered). A page of L from m matches among n objects is
// then read by walking the tree from the continue token's position and checking each record
// against every condition (the values it holds) until L+1 match: about (L+1)·n/m visits,
// against m for the driver's walk with a bounded heap. The planner takes the walk when it is
// cheaper, m² > (L+1)·n: at n = 100,000 and L = 100, from about 3,200 matches on.
//
// Why a B-tree (github.com/google/btree, the one client-go's dependencies already carry):
// an insert or delete is O(log n) with a few pointer moves, where a sorted slice moves half
// of a large value's keys; it holds 8 or 16 bytes per entry in nodes of up to 63 entries,
// a fraction of a map entry.

// treeDegree is the B-trees' degree: nodes of up to 2·treeDegree-1 entries.
const treeDegree = 32

// newKeyTree returns an empty tree of records in (namespace, name) order.
func newKeyTree() *btree.BTreeG[*record] {
	return btree.NewG(treeDegree, recordLess)
}

// vitem is one (value, record) pair of an ordered index.
type vitem struct {
	e   *valueEntry
	rec *record
}

func vitemLess(a, b vitem) bool {
	if a.e != b.e {
		if c := compareValues(a.e.sv, b.e.sv); c != 0 {
			return c < 0
		}
	}
	return compareRecords(a.rec, b.rec) < 0
}

// makeOrdered builds the index's value tree. The caller holds the write lock.
func (ix *index) makeOrdered() {
	t := btree.NewG(treeDegree, vitemLess)
	for v, e := range ix.byValue {
		e.sv = newSortValue([]string{v}, false)
		e.each("", true, func(rec *record) { t.ReplaceOrInsert(vitem{e, rec}) })
	}
	ix.ordered = t
}

// ensureOrdered makes the named index ordered if it is not yet.
func (s *Store) ensureOrdered(name string) {
	s.mu.RLock()
	ix := s.indexes[name]
	done := ix == nil || ix.ordered != nil
	s.mu.RUnlock()
	if done {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ix := s.indexes[name]; ix != nil && ix.ordered == nil {
		ix.makeOrdered()
	}
}

// walkKeys visits the records of scope in (namespace, name) order, starting after key
// after (if hasAfter), until visit returns false.
func (s *Store) walkKeys(ns string, allNS bool, after string, hasAfter bool, visit func(*record) bool) {
	start := ""
	if !allNS {
		start = ns + "/" // before every name of ns
	}
	if hasAfter && compareKeys(after, start) > 0 {
		start = after
	}
	s.byKey.AscendGreaterOrEqual(newRecord(start, nil), func(rec *record) bool {
		if hasAfter && rec.key == after {
			return true
		}
		if !allNS && NamespaceOf(rec.key) != ns {
			return false
		}
		return visit(rec)
	})
}

// walkValues visits the records of the ordered index ix in order o (by value, ascending or
// descending, ties by (namespace, name)), from the position after on (if hasAfter; the
// caller skips what is not after it), each record once, at its sort value; then those
// without a value, in (namespace, name) order. It stops when visit returns false.
func (s *Store) walkValues(ix *index, o order, after position, hasAfter bool, visit func(*record) bool) {
	atSortValue := func(it vitem) bool {
		values := it.rec.valuesOf(ix.slot)
		return len(values) == 1 || newSortValue(values, o.desc).s == it.e.sv.s
	}
	more := true
	step := func(it vitem) bool {
		if atSortValue(it) {
			more = visit(it.rec)
		}
		return more
	}
	if !hasAfter || after.val.has {
		if !o.desc {
			if hasAfter {
				ix.ordered.AscendGreaterOrEqual(vitem{&valueEntry{sv: after.val}, newRecord(after.key, nil)}, step)
			} else {
				ix.ordered.Ascend(step)
			}
		} else {
			s.descendValues(ix, after, hasAfter, step, &more)
		}
	}
	if !more {
		return
	}
	// Objects without a value come last in both directions.
	start, startAfter := "", false
	if hasAfter && !after.val.has {
		start, startAfter = after.key, true
	}
	s.walkKeys("", true, start, startAfter, func(rec *record) bool {
		if len(rec.valuesOf(ix.slot)) > 0 {
			return true
		}
		return visit(rec)
	})
}

// descendValues walks the values of ix from the largest (or from after's value) down, each
// value's records in (namespace, name) order.
func (s *Store) descendValues(ix *index, after position, hasAfter bool, step func(vitem) bool, more *bool) {
	// records walks one value's records in (namespace, name) order from key on.
	records := func(sv sortValue, key string) {
		ix.ordered.AscendGreaterOrEqual(vitem{&valueEntry{sv: sv}, newRecord(key, nil)}, func(it vitem) bool {
			return it.e.sv.s == sv.s && step(it)
		})
	}
	var cur sortValue // the value being walked
	if hasAfter {
		cur = after.val // the rest of after's value, then the smaller ones
		records(cur, after.key)
	} else {
		max, ok := ix.ordered.Max()
		if !ok {
			return
		}
		cur = max.e.sv
		records(cur, "")
	}
	// The values below cur in one descending pass: a value's records arrive in reverse
	// (namespace, name) order, so they are kept until the next value starts and stepped
	// through reversed. A value with more than descendBuffer records is walked on its own,
	// from its first record, and the pass resumes below it. (One search per value, as this
	// walk first did, cost two tree searches and their allocations per value: most of a
	// page sorted by a value most objects do not share.)
	var buf []vitem
	flush := func() {
		for k := len(buf) - 1; k >= 0 && *more; k-- {
			if !step(buf[k]) {
				break
			}
		}
		buf = buf[:0]
	}
	for *more {
		var large *valueEntry // a value with too many records to keep
		ix.ordered.DescendLessOrEqual(vitem{&valueEntry{sv: cur}, &record{}}, func(it vitem) bool {
			if it.e.sv.s == cur.s {
				return true
			}
			if len(buf) > 0 && buf[0].e.sv.s != it.e.sv.s {
				if flush(); !*more {
					return false
				}
			}
			if len(buf) == descendBuffer {
				large = it.e
				return false
			}
			buf = append(buf, it)
			return true
		})
		if !*more {
			return
		}
		if large == nil {
			flush()
			return
		}
		buf = buf[:0]
		cur = large.sv
		records(cur, "")
	}
}

// descendBuffer is how many records of one value descendValues keeps to reverse them.
const descendBuffer = 64

// orderedPage reads the walker's page from an ordered structure when that is cheaper than
// the driver's walk (best candidates; a scan when the walker has no driver), and reports
// whether it did. The caller holds the read lock.
func (s *Store) orderedPage(w *walker, ns string, allNS bool, best int, sortBy string) bool {
	sel := w.sel
	scope := len(s.items)
	if !allNS {
		scope, _ = s.inNamespace(ns)
	}
	m := best
	if w.driver < 0 {
		m = scope
	}
	// A walk in key order ranges over the scope; one in value order over every object.
	span := scope
	if sel.o.byValue {
		if w.gix == nil || w.gix.ordered == nil {
			return false
		}
		span = len(s.items)
	}
	// (sel.limit+1 in float64: Limit may be math.MaxInt, which would wrap to a negative
	// bound and walk every object.)
	if m == 0 || float64(m)*float64(m) <= (float64(sel.limit)+1)*float64(span) {
		return false
	}
	w.driver = -1 // every condition is checked on every record walked
	visit := func(rec *record) bool {
		if !allNS && NamespaceOf(rec.key) != ns {
			return true
		}
		w.visit(rec)
		return w.stopped == nil && sel.matched <= sel.limit
	}
	if sel.o.byValue {
		w.plan.Driver = "order(" + sortBy + ")"
		s.walkValues(w.gix, sel.o, sel.after, sel.hasAfter, visit)
	} else {
		w.plan.Driver = "order(namespace, name)"
		s.walkKeys(ns, allNS, sel.after.key, sel.hasAfter, visit)
	}
	return true
}
