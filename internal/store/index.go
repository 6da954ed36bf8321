package store

import (
	"sync"
	"sync/atomic"
)

// IndexFunc computes the values an object is indexed under. It has the shape of client-go's
// cache.IndexFunc. An error does not lose the object: the store keeps it, indexes whatever
// values were returned alongside the error, and counts the error on the index.
type IndexFunc func(obj any) ([]string, error)

// keySet is a set of object keys.
type keySet map[string]struct{}

// valueEntry holds the keys indexed under one value, per namespace, so that a namespaced
// lookup reads only that namespace's keys.
type valueEntry struct {
	total int
	byNS  map[string]keySet
}

// index is one registered index. Its maps are guarded by the Store's lock.
type index struct {
	name string
	fn   IndexFunc
	refs int

	byValue map[string]*valueEntry // value -> keys
	byKey   map[string][]string    // key -> values it is indexed under

	errs    atomic.Int64
	errMu   sync.Mutex
	lastErr error
}

func newIndex(name string, fn IndexFunc) *index {
	return &index{name: name, fn: fn, byValue: map[string]*valueEntry{}, byKey: map[string][]string{}}
}

// compute runs the index function; a panic or an error is counted, never propagated.
func (ix *index) compute(obj any) (values []string) {
	defer func() {
		if r := recover(); r != nil {
			ix.fail(&IndexFuncError{Index: ix.name, Panic: r})
			values = nil
		}
	}()
	values, err := ix.fn(obj)
	if err != nil {
		ix.fail(&IndexFuncError{Index: ix.name, Err: err})
	}
	return dedupe(values)
}

func (ix *index) fail(err error) {
	ix.errs.Add(1)
	ix.errMu.Lock()
	ix.lastErr = err
	ix.errMu.Unlock()
}

// dedupe removes repeated values in place; index functions of multi-valued paths may
// return one value several times.
func dedupe(values []string) []string {
	if len(values) < 2 {
		return values
	}
	out := values[:0]
	for i, v := range values {
		seen := false
		for _, w := range values[:i] {
			if v == w {
				seen = true
				break
			}
		}
		if !seen {
			out = append(out, v)
		}
	}
	return out
}

func (ix *index) add(key, ns string, values []string) {
	if len(values) == 0 {
		return
	}
	ix.byKey[key] = values
	for _, v := range values {
		e := ix.byValue[v]
		if e == nil {
			e = &valueEntry{byNS: map[string]keySet{}}
			ix.byValue[v] = e
		}
		set := e.byNS[ns]
		if set == nil {
			set = keySet{}
			e.byNS[ns] = set
		}
		if _, ok := set[key]; !ok {
			set[key] = struct{}{}
			e.total++
		}
	}
}

func (ix *index) remove(key, ns string) {
	values, ok := ix.byKey[key]
	if !ok {
		return
	}
	delete(ix.byKey, key)
	for _, v := range values {
		e := ix.byValue[v]
		if e == nil {
			continue
		}
		if set := e.byNS[ns]; set != nil {
			if _, ok := set[key]; ok {
				delete(set, key)
				e.total--
			}
			if len(set) == 0 {
				delete(e.byNS, ns)
			}
		}
		if e.total == 0 {
			delete(ix.byValue, v)
		}
	}
}

// count returns how many keys value has in ns ("" with allNS for every namespace).
func (e *valueEntry) count(ns string, allNS bool) int {
	if e == nil {
		return 0
	}
	if allNS {
		return e.total
	}
	return len(e.byNS[ns])
}

// each calls fn for every key of e in scope.
func (e *valueEntry) each(ns string, allNS bool, fn func(key string)) {
	if e == nil {
		return
	}
	if !allNS {
		for k := range e.byNS[ns] {
			fn(k)
		}
		return
	}
	for _, set := range e.byNS {
		for k := range set {
			fn(k)
		}
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
