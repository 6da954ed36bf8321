package store

import (
	"slices"
	"strings"
	"sync"

	"sync/atomic"

	"github.com/google/btree"
)

// IndexFunc computes the values an object is indexed under. It has the shape of client-go's
// cache.IndexFunc. An error (or a panic) does not lose the object: the store keeps it,
// indexes whatever values were returned alongside the error, and counts the error on the
// index. Those values may be only some of the object's (a JSONPath evaluation that ran out of
// its budget), so the object matches the index's positive conditions on what was returned,
// and never NotEqual or NotExists, which need all of them: the same meaning a JSONPath
// condition evaluated per object has when its evaluation fails (matchPaths).
type IndexFunc func(obj any) ([]string, error)

// recordSet is a set of stored objects' records (a pointer: half a key's size in a map, and
// no lookup in items to reach the object).
type recordSet map[*record]struct{}

// valueEntry holds the objects (records) indexed under one value, in (namespace, name)
// order. A namespaced lookup must not read other namespaces' keys, yet splitting every
// value's keys by namespace costs a map entry and a list per (value, namespace) pair, which
// for values spread thinly over namespaces (node names) is one per object. So the keys stay
// in one list while they are in one namespace or few (at most splitAt: a namespaced lookup
// filters them, a bounded cost), and are split into a list per namespace when a value has
// more keys in several namespaces; the lists are then also kept in namespace order, so that
// a lookup across namespaces reads them in (namespace, name) order without a map lookup.
type valueEntry struct {
	sv      sortValue // the value's sort value, once the index is ordered
	total   int
	ns      string             // byNS == nil: the namespace of the first key
	multiNS bool               // byNS == nil: some key is in another namespace than ns
	keys    keyList            // byNS == nil: the keys
	byNS    map[string]*nsKeys // the keys by namespace, once split
	nsOrder []*nsKeys          // byNS's lists, in namespace order
}

// nsKeys is the keys of one namespace under a split value.
type nsKeys struct {
	ns   string
	keys keyList
}

// splitAt is the most keys in several namespaces one list holds.
const splitAt = 64

// insert adds a record (of namespace ns); it reports whether it was new.
func (e *valueEntry) insert(rec *record, ns string) bool {
	if e.byNS != nil {
		if !e.listOf(ns).keys.add(rec) {
			return false
		}
		e.total++
		return true
	}
	if !e.keys.add(rec) {
		return false
	}
	if e.total == 0 {
		e.ns = ns
	} else if ns != e.ns {
		e.multiNS = true
	}
	if e.total++; e.multiNS && e.total > splitAt {
		e.split()
	}
	return true
}

// listOf returns the list of namespace ns of a split value, creating it.
func (e *valueEntry) listOf(ns string) *nsKeys {
	nk := e.byNS[ns]
	if nk == nil {
		nk = &nsKeys{ns: ns}
		e.byNS[ns] = nk
		i, _ := slices.BinarySearchFunc(e.nsOrder, ns, func(a *nsKeys, ns string) int { return strings.Compare(a.ns, ns) })
		e.nsOrder = slices.Insert(e.nsOrder, i, nk)
	}
	return nk
}

// split moves the keys into one list per namespace.
func (e *valueEntry) split() {
	e.byNS = map[string]*nsKeys{}
	e.keys.each(func(rec *record) bool {
		e.listOf(NamespaceOf(rec.key)).keys.add(rec)
		return true
	})
	e.keys, e.ns, e.multiNS = keyList{}, "", false
}

// remove deletes a record (of namespace ns); it reports whether it was there.
func (e *valueEntry) remove(rec *record, ns string) bool {
	switch {
	case e.byNS != nil:
		nk := e.byNS[ns]
		if nk == nil || !nk.keys.remove(rec) {
			return false
		}
		if nk.keys.n == 0 {
			delete(e.byNS, ns)
			e.nsOrder = slices.DeleteFunc(e.nsOrder, func(x *nsKeys) bool { return x == nk })
		}
	case !e.multiNS && ns != e.ns:
		return false
	case !e.keys.remove(rec):
		return false
	}
	if e.total--; e.total == 0 {
		*e = valueEntry{}
	}
	return true
}

// index is one registered index. Its maps are guarded by the Store's lock.
type index struct {
	name string
	fn   IndexFunc
	refs int

	slot    int                    // where records keep this index's values
	byValue map[string]*valueEntry // value -> keys
	// ordered holds the (value, record) pairs in sort order, from the first query that
	// sorts by the index on (see ordered.go); nil until then.
	ordered *btree.BTreeG[vitem]

	// failed holds the records whose values the function could not compute in full (it
	// failed on their object): they match no negative condition on the index.
	failed map[*record]struct{}

	errs    atomic.Int64
	errMu   sync.Mutex
	lastErr error
}

func newIndex(name string, fn IndexFunc) *index {
	return &index{name: name, fn: fn, byValue: map[string]*valueEntry{}}
}

// compute runs the index function; a panic or an error is counted, never propagated, and
// reported as failed (the values returned with an error are kept).
func (ix *index) compute(obj any) (values []string, failed bool) {
	defer func() {
		if r := recover(); r != nil {
			ix.fail(&IndexFuncError{Index: ix.name, Panic: r})
			values, failed = nil, true
		}
	}()
	values, err := ix.fn(obj)
	if err != nil {
		ix.fail(&IndexFuncError{Index: ix.name, Err: err})
	}
	return dedupe(values), err != nil
}

// hasFailed says whether the function failed on rec's object (see IndexFunc).
func (ix *index) hasFailed(rec *record) bool {
	_, ok := ix.failed[rec]
	return ok
}

func (ix *index) fail(err error) {
	ix.errs.Add(1)
	ix.errMu.Lock()
	ix.lastErr = err
	ix.errMu.Unlock()
}

// dedupe returns values without repeats (index functions of multi-valued paths may return
// one value several times): values itself when it has none, else a copy, since the slice is
// the function's.
func dedupe(values []string) []string {
	for i := 1; i < len(values); i++ {
		if slices.Contains(values[:i], values[i]) {
			out := slices.Clone(values[:i]) // distinct so far
			for _, v := range values[i+1:] {
				if !slices.Contains(out, v) {
					out = append(out, v)
				}
			}
			return out
		}
	}
	return values
}

// add indexes rec (of namespace ns) under values, which failed says are maybe not all of its
// values.
func (ix *index) add(rec *record, ns string, values []string, failed bool) {
	if failed {
		if ix.failed == nil {
			ix.failed = map[*record]struct{}{}
		}
		ix.failed[rec] = struct{}{}
	}
	for _, v := range values {
		e := ix.byValue[v]
		if e == nil {
			e = &valueEntry{}
			if ix.ordered != nil {
				e.sv = newSortValue([]string{v}, false)
			}
			ix.byValue[v] = e
		}
		if e.insert(rec, ns) && ix.ordered != nil {
			ix.ordered.ReplaceOrInsert(vitem{e, rec})
		}
	}
}

// remove unindexes rec (of namespace ns) from values, the values add was given.
func (ix *index) remove(rec *record, ns string, values []string) {
	delete(ix.failed, rec)
	for _, v := range values {
		e := ix.byValue[v]
		if e == nil {
			continue
		}
		if ix.ordered != nil {
			ix.ordered.Delete(vitem{e, rec}) // before remove, which clears an emptied entry
		}
		if e.remove(rec, ns) && e.total == 0 {
			delete(ix.byValue, v)
		}
	}
}

// count returns how many keys value has in ns ("" with allNS for every namespace).
func (e *valueEntry) count(ns string, allNS bool) int {
	switch {
	case e == nil:
		return 0
	case allNS:
		return e.total
	case e.byNS != nil:
		if nk := e.byNS[ns]; nk != nil {
			return nk.keys.n
		}
		return 0
	case !e.multiNS:
		if ns == e.ns {
			return e.total
		}
		return 0
	}
	n := 0
	e.keys.each(func(rec *record) bool {
		if NamespaceOf(rec.key) == ns {
			n++
		}
		return true
	})
	return n
}

// each calls fn for every record of e in scope, in (namespace, name) order.
func (e *valueEntry) each(ns string, allNS bool, fn func(rec *record)) {
	all := func(rec *record) bool { fn(rec); return true }
	switch {
	case e == nil:
	case e.byNS != nil && allNS:
		for _, nk := range e.nsOrder {
			nk.keys.each(all)
		}
	case e.byNS != nil:
		if nk := e.byNS[ns]; nk != nil {
			nk.keys.each(all)
		}
	case allNS || (!e.multiNS && ns == e.ns):
		e.keys.each(all)
	case e.multiNS:
		e.keys.each(func(rec *record) bool {
			if NamespaceOf(rec.key) == ns {
				fn(rec)
			}
			return true
		})
	}
}

// IndexStats describes one index.
type IndexStats struct {
	Name string
	// Values is the number of distinct values; Entries the number of (value, object) pairs.
	Values, Entries int
	// Errors counts objects whose index function failed or yielded a value the index cannot
	// use; LastError is the most recent such failure.
	Errors    int64
	LastError error
	// Refs is the number of registrations sharing the index.
	Refs int
}

func (ix *index) stats() IndexStats {
	entries := 0
	for _, e := range ix.byValue {
		entries += e.total
	}
	ix.errMu.Lock()
	last := ix.lastErr
	ix.errMu.Unlock()
	return IndexStats{Name: ix.name, Values: len(ix.byValue), Entries: entries, Errors: ix.errs.Load(), LastError: last, Refs: ix.refs}
}
