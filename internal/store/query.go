package store

import (
	"encoding/base64"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kindex/kindex/query"
)

// QueryOptions supplies what a query needs beyond the store.
type QueryOptions struct {
	// PathFunc compiles the JSONPath of a query.Where condition into a function that yields
	// the values of an object. Nil refuses such conditions.
	PathFunc func(expr string) (IndexFunc, error)
	// Labels returns an object's labels, for query.Query.Labels. Nil refuses label selectors.
	Labels func(obj any) map[string]string
}

// Item is one query result.
type Item struct {
	Key string
	Obj any
}

// Query runs q and returns one page of results in (namespace, name) order.
//
// Cost: the planner picks the positive indexed condition with the fewest entries in scope
// (an equality or set lookup reads only its value's keys, in the queried namespace); every
// other condition is checked on those candidates only (an index condition by a map lookup, a
// JSONPath condition by evaluating the path on the object). Without a positive indexed
// condition the query visits every object in scope, and only when q.Scan is set. The matches
// are sorted before Limit and Continue are applied, so a page costs as much as the whole
// match set.
func (s *Store) Query(q query.Query, opts QueryOptions) ([]Item, string, query.Plan, error) {
	var plan query.Plan
	var indexed, pathConds []*matcher
	var pathFns []IndexFunc
	for _, c := range q.Conditions {
		m, err := newMatcher(c)
		if err != nil {
			return nil, "", plan, err
		}
		if c.Index != "" {
			indexed = append(indexed, m)
			continue
		}
		if opts.PathFunc == nil {
			return nil, "", plan, &query.InvalidError{Condition: c.String(), Reason: "JSONPath conditions are not supported here"}
		}
		fn, err := opts.PathFunc(c.Path)
		if err != nil {
			return nil, "", plan, &query.InvalidError{Condition: c.String(), Reason: "bad JSONPath", Err: err}
		}
		pathConds = append(pathConds, m)
		pathFns = append(pathFns, fn)
	}
	if q.Labels != nil && !q.Labels.Empty() && opts.Labels == nil {
		return nil, "", plan, &query.InvalidError{Reason: "label selectors are not supported here"}
	}
	after, err := decodeContinue(q.Continue)
	if err != nil {
		return nil, "", plan, err
	}

	candidates, plan, err := s.candidates(q, indexed)
	if err != nil {
		return nil, "", plan, err
	}
	matched := candidates[:0]
	for _, it := range candidates {
		if after != "" && !keyLess(after, it.Key) {
			continue
		}
		if q.Labels != nil && !q.Labels.Empty() && !q.Labels.Matches(labels.Set(opts.Labels(it.Obj))) {
			continue
		}
		if !matchPaths(it.Obj, pathConds, pathFns) {
			continue
		}
		matched = append(matched, it)
	}
	plan.Matched = len(matched)
	sort.Slice(matched, func(i, j int) bool { return keyLess(matched[i].Key, matched[j].Key) })
	next := ""
	if q.Limit > 0 && len(matched) > q.Limit {
		matched = matched[:q.Limit]
		next = encodeContinue(matched[len(matched)-1].Key)
	}
	return matched, next, plan, nil
}

func matchPaths(obj any, conds []*matcher, fns []IndexFunc) bool {
	for i, m := range conds {
		values, err := safeValues(fns[i], obj)
		if err != nil || !m.match(values) {
			return false
		}
	}
	return true
}

func safeValues(fn IndexFunc, obj any) (values []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			values, err = nil, &IndexFuncError{Index: "query", Panic: r}
		}
	}()
	return fn(obj)
}

// candidates picks the driver and returns the objects that pass every indexed condition.
// Index conditions are checked under the read lock; everything else is left to the caller.
func (s *Store) candidates(q query.Query, conds []*matcher) ([]Item, query.Plan, error) {
	var plan query.Plan
	ns, allNS := q.Namespace, q.Namespace == ""
	s.mu.RLock()
	defer s.mu.RUnlock()
	ixs := make([]*index, len(conds))
	driver, best := -1, 0
	for i, m := range conds {
		ix, ok := s.indexes[m.cond.Index]
		if !ok {
			return nil, plan, &IndexNotFoundError{Name: m.cond.Index}
		}
		ixs[i] = ix
		if !m.cond.Op.Positive() {
			continue
		}
		if n := estimate(ix, m, ns, allNS); driver < 0 || n < best {
			driver, best = i, n
		}
	}
	if driver < 0 && !q.Scan {
		return nil, plan, query.ErrScanRequired
	}
	var out []Item
	visit := func(key string) {
		plan.Candidates++
		for i, m := range conds {
			if i != driver && !m.match(ixs[i].byKey[key]) {
				return
			}
		}
		out = append(out, Item{Key: key, Obj: s.items[key]})
	}
	if driver < 0 {
		plan.Driver = "scan"
		if allNS {
			for key := range s.items {
				visit(key)
			}
		} else {
			for key := range s.byNS[ns] {
				visit(key)
			}
		}
		return out, plan, nil
	}
	plan.Driver = conds[driver].cond.String()
	ix, m := ixs[driver], conds[driver]
	seen := keySet{}
	each := func(e *valueEntry) {
		e.each(ns, allNS, func(key string) {
			if _, dup := seen[key]; !dup {
				seen[key] = struct{}{}
				visit(key)
			}
		})
	}
	switch m.cond.Op {
	case query.Equal:
		each(ix.byValue[m.cond.Values[0]])
	case query.In:
		for v := range m.set {
			each(ix.byValue[v])
		}
	default:
		for value, e := range ix.byValue {
			if m.matchValue(value) {
				each(e)
			}
		}
	}
	return out, plan, nil
}

// estimate returns how many entries a positive condition reads from its index in scope.
func estimate(ix *index, m *matcher, ns string, allNS bool) int {
	switch m.cond.Op {
	case query.Equal:
		return ix.byValue[m.cond.Values[0]].count(ns, allNS)
	case query.In:
		n := 0
		for v := range m.set {
			n += ix.byValue[v].count(ns, allNS)
		}
		return n
	}
	n := 0
	for v, e := range ix.byValue {
		if m.matchValue(v) {
			n += e.count(ns, allNS)
		}
	}
	return n
}

// keyLess orders keys by (namespace, name).
func keyLess(a, b string) bool {
	an, aname := splitKey(a)
	bn, bname := splitKey(b)
	if an != bn {
		return an < bn
	}
	return aname < bname
}

func splitKey(key string) (ns, name string) {
	if i := strings.IndexByte(key, '/'); i >= 0 {
		return key[:i], key[i+1:]
	}
	return "", key
}

func encodeContinue(key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(key))
}

func decodeContinue(token string) (string, error) {
	if token == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) == 0 {
		return "", &query.InvalidError{Reason: "malformed continue token", Err: err}
	}
	return string(b), nil
}
