package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kindex/kindex/query"
)

// QueryOptions supplies what a query needs beyond the store.
type QueryOptions struct {
	// Scope identifies the store to continue tokens (the informer's key), so that a token
	// is refused by another informer.
	Scope string
	// Resolve maps the index name of a condition to the name of the store index that
	// serves it, once per query, before the store's lock is taken (the informer resolves
	// the names its users registered). Errors and the plan name what the query said. Nil
	// means conditions name store indexes.
	Resolve func(name string) (string, error)
	// PathFunc compiles the JSONPath of a query.Where condition into a function that yields
	// the values of an object. Nil refuses such conditions.
	PathFunc func(expr string) (IndexFunc, error)
	// Labels returns an object's labels, for query.Query.Labels. Nil refuses label selectors.
	Labels func(obj any) map[string]string
}

// Item is one query result: a record as the query saw it under the store's lock (records
// change in place).
type Item struct {
	Key string
	Obj any
	// group holds the values of the group index (CountBy).
	group []string
}

// Query runs q and returns one page of results in (namespace, name) order.
//
// What each condition costs is written once, in package query's documentation.
func (s *Store) Query(ctx context.Context, q query.Query, opts QueryOptions) ([]Item, string, query.Plan, error) {
	if items, plan, ok, err := queryEqual(s, q, opts, newItem); ok || err != nil {
		return items, "", plan, err
	}
	return s.query(ctx, q, opts)
}

// QueryAs is Query with each result made by conv from its key and object, so that a caller
// handing out its own result type builds one slice, not two. conv runs under the store's
// read lock: it must not call the store.
func QueryAs[R any](ctx context.Context, s *Store, q query.Query, opts QueryOptions, conv func(key string, obj any) R) ([]R, string, query.Plan, error) {
	if items, plan, ok, err := queryEqual(s, q, opts, conv); ok || err != nil {
		return items, "", plan, err
	}
	items, next, plan, err := s.query(ctx, q, opts)
	if err != nil {
		return nil, "", plan, err
	}
	out := make([]R, len(items))
	for i, it := range items {
		out[i] = conv(it.Key, it.Obj)
	}
	return out, next, plan, nil
}

func newItem(key string, obj any) Item { return Item{Key: key, Obj: obj} }

// query is Query's general path.
func (s *Store) query(ctx context.Context, q query.Query, opts QueryOptions) ([]Item, string, query.Plan, error) {
	pq, err := prepare(q, opts)
	if err != nil {
		return nil, "", query.Plan{}, err
	}
	o := orderOf(q)
	sortKey := ""
	if o.byValue {
		if sortKey, err = opts.resolve(q.SortBy); err != nil {
			return nil, "", query.Plan{}, err
		}
	} else if q.Descending {
		return nil, "", query.Plan{}, &query.InvalidError{Reason: "Descending needs SortBy"}
	}
	after, hasAfter, err := decodeContinue(q.Continue, q, opts.Scope)
	if err != nil {
		return nil, "", query.Plan{}, err
	}
	var hits []Item
	var plan query.Plan
	var sorted bool // hits are in (namespace, name) order
	var sel *pageSel
	if q.Limit > 0 && len(pq.paths) == 0 && !pq.labels && len(pq.groups) == 0 {
		// Only indexed conditions: the page is selected during the walk, under the lock,
		// holding q.Limit results at most, never the whole match set.
		sel = &pageSel{o: o, after: after, hasAfter: hasAfter, limit: q.Limit}
		if o.byValue {
			s.ensureOrdered(sortKey)
		}
		hits, plan, _, err = s.candidates(ctx, pq, sortKey, sel)
	} else {
		hits, plan, sorted, err = s.matchAll(ctx, pq, sortKey)
	}
	if err != nil {
		var nf *IndexNotFoundError
		if o.byValue && errors.As(err, &nf) && nf.Name == sortKey {
			return nil, "", plan, &IndexNotFoundError{Name: q.SortBy}
		}
		return nil, "", plan, err
	}
	if sel != nil {
		page := sel.page()
		out := make([]Item, len(page))
		for i, r := range page {
			out[i] = r.item
		}
		plan.Matched = sel.matched
		next := ""
		if sel.matched > q.Limit {
			next = encodeContinue(page[len(page)-1].pos, q, opts.Scope)
		}
		return out, next, plan, nil
	}
	if !o.byValue && !hasAfter && (q.Limit <= 0 || len(hits) <= q.Limit) {
		// The whole match set is the page: sort it in place (if the walk did not produce
		// it in order), nothing to select.
		if !sorted {
			sortItemsByKey(hits)
		}
		plan.Matched = len(hits)
		return hits, "", plan, nil
	}
	if !o.byValue && sorted {
		// In order already: the page is the first Limit after the position.
		if hasAfter {
			i, _ := slices.BinarySearchFunc(hits, after.key, func(h Item, key string) int { return compareKeys(h.Key, key) })
			for i < len(hits) && hits[i].Key == after.key {
				i++
			}
			hits = hits[i:]
		}
		plan.Matched = len(hits)
		next := ""
		if q.Limit > 0 && len(hits) > q.Limit {
			hits = hits[:q.Limit]
			next = encodeContinue(position{key: hits[len(hits)-1].Key}, q, opts.Scope)
		}
		return hits, next, plan, nil
	}
	ranks := make([]ranked, 0, len(hits))
	for _, h := range hits {
		r := ranked{item: h, pos: position{key: h.Key}}
		if o.byValue {
			r.pos.val = newSortValue(h.group, o.desc)
			r.item.group = nil
		}
		if hasAfter && o.compare(&r.pos, &after) <= 0 {
			continue
		}
		ranks = append(ranks, r)
	}
	plan.Matched = len(ranks)
	page := selectPage(ranks, o, q.Limit)
	out := hits[:len(page)]
	for i, r := range page {
		out[i] = r.item
	}
	next := ""
	if q.Limit > 0 && len(ranks) > q.Limit {
		next = encodeContinue(page[len(page)-1].pos, q, opts.Scope)
	}
	return out, next, plan, nil
}

// queryEqual answers the most common query, one equality on an index and nothing else,
// without preparing it: one value's list, already in (namespace, name) order, is the
// result. An Exists or In condition alone is answered the same way when one value's list
// holds all its matches in scope (an index of one value, such as a marker label, for
// Exists; one of In's values present). It reports false, without error, for any other
// query (or a page that would need a continue token), which then takes the general path.
func queryEqual[R any](s *Store, q query.Query, opts QueryOptions, conv func(key string, obj any) R) ([]R, query.Plan, bool, error) {
	c := singleEquality(&q)
	if c == nil {
		c = singleExistsOrIn(&q)
	}
	if c == nil || q.Limit < 0 {
		return nil, query.Plan{}, false, nil
	}
	key, err := opts.resolve(c.Index)
	if err != nil {
		return nil, query.Plan{}, false, err
	}
	ns, allNS := q.Namespace, q.Namespace == ""
	s.mu.RLock()
	defer s.mu.RUnlock()
	var e *valueEntry
	if c.Op == query.Equal {
		e, err = s.equalEntry(c, key)
	} else {
		var ok bool
		if e, ok, err = s.onlyEntry(c, key, ns, allNS); err == nil && !ok {
			return nil, query.Plan{}, false, nil
		}
	}
	if err != nil {
		return nil, query.Plan{}, false, err
	}
	n := e.count(ns, allNS)
	if q.Limit > 0 && n > q.Limit {
		return nil, query.Plan{}, false, nil
	}
	out := make([]R, 0, n)
	e.each(ns, allNS, func(rec *record) { out = append(out, conv(rec.key, rec.obj)) })
	return out, query.Plan{Driver: c.String(), Candidates: len(out), Matched: len(out)}, true, nil
}

// singleEquality returns q's condition when q is one equality on an index and nothing else
// (no JSONPath, label selector, OR, sort or continue token): the value's entries answer it
// without preparing a plan. Otherwise nil.
func singleEquality(q *query.Query) *query.Condition {
	if len(q.Conditions) != 1 || len(q.AnyOf) != 0 || q.Continue != "" || q.SortBy != "" || q.Descending ||
		q.Labels != nil && !q.Labels.Empty() {
		return nil
	}
	c := &q.Conditions[0]
	if c.Op != query.Equal || c.Index == "" || c.Path != "" || len(c.Values) != 1 || c.Values[0] == query.NonScalar {
		return nil
	}
	return c
}

// singleExistsOrIn returns q's condition when q is one Exists or one In on an index and
// nothing else, as singleEquality does for an equality. Otherwise nil (a malformed
// condition too: the general path reports it).
func singleExistsOrIn(q *query.Query) *query.Condition {
	if len(q.Conditions) != 1 || len(q.AnyOf) != 0 || q.Continue != "" || q.SortBy != "" || q.Descending ||
		q.Labels != nil && !q.Labels.Empty() {
		return nil
	}
	c := &q.Conditions[0]
	if c.Index == "" || c.Path != "" {
		return nil
	}
	switch c.Op {
	case query.Exists:
		if len(c.Values) == 0 {
			return c
		}
	case query.In:
		if len(c.Values) > 0 && !slices.Contains(c.Values, query.NonScalar) {
			return c
		}
	}
	return nil
}

// onlyEntry returns the entries of the one value that holds every object in scope matching
// c, an Exists or an In on the store index key: the index's only value for Exists, the one
// of In's values present in scope (nil if none matches). It reports false when several
// values may match: their lists must be merged, which the general path does. The caller
// holds the read lock.
func (s *Store) onlyEntry(c *query.Condition, key, ns string, allNS bool) (*valueEntry, bool, error) {
	ix, ok := s.indexes[key]
	if !ok {
		return nil, false, &IndexNotFoundError{Name: c.Index}
	}
	var only *valueEntry
	take := func(e *valueEntry) bool {
		if e == nil || e == only || e.count(ns, allNS) == 0 {
			return true
		}
		if only != nil {
			return false
		}
		only = e
		return true
	}
	switch c.Op {
	case query.Exists:
		if len(ix.byValue) > 1 {
			return nil, false, nil
		}
		for _, e := range ix.byValue {
			take(e)
		}
	case query.In:
		for _, v := range c.Values {
			if !take(ix.byValue[v]) {
				return nil, false, nil
			}
		}
	}
	return only, true, nil
}

// resolve returns the store index that name names (Resolve).
func (opts QueryOptions) resolve(name string) (string, error) {
	if opts.Resolve == nil {
		return name, nil
	}
	return opts.Resolve(name)
}

// equalEntry returns the entries of c's value in the store index key (nil if none has it);
// the caller holds the read lock.
func (s *Store) equalEntry(c *query.Condition, key string) (*valueEntry, error) {
	ix, ok := s.indexes[key]
	if !ok {
		return nil, &IndexNotFoundError{Name: c.Index}
	}
	return ix.byValue[c.Values[0]], nil
}

// Count returns how many objects match q (Limit and Continue are ignored). A query with
// only a namespace, or only one equality condition, is answered from the sizes the store
// keeps, without visiting objects (the equality without preparing a plan).
func (s *Store) Count(ctx context.Context, q query.Query, opts QueryOptions) (int, query.Plan, error) {
	q.Limit, q.Continue = 0, ""
	if c := singleEquality(&q); c != nil {
		key, err := opts.resolve(c.Index)
		if err != nil {
			return 0, query.Plan{}, err
		}
		s.mu.RLock()
		defer s.mu.RUnlock()
		e, err := s.equalEntry(c, key)
		if err != nil {
			return 0, query.Plan{}, err
		}
		n := e.count(q.Namespace, q.Namespace == "")
		return n, query.Plan{Driver: c.String(), Matched: n}, nil
	}
	pq, err := prepare(q, opts)
	if err != nil {
		return 0, query.Plan{}, err
	}
	if len(pq.groups) == 0 {
		if n, plan, ok, err := s.countFromSizes(pq); ok || err != nil {
			return n, plan, err
		}
	}
	hits, plan, _, err := s.matchAll(ctx, pq, "")
	return len(hits), plan, err
}

// CountBy returns, for each value of the named index (a store index name, resolved with
// opts.Resolve like a condition's), how many objects that match q have it; an object with
// several values counts once under each. A query with only a namespace is answered from the
// index's value sizes: time proportional to the distinct values, not the objects.
func (s *Store) CountBy(ctx context.Context, q query.Query, index string, opts QueryOptions) (map[string]int, error) {
	q.Limit, q.Continue = 0, ""
	pq, err := prepare(q, opts)
	if err != nil {
		return nil, err
	}
	key, err := opts.resolve(index)
	if err != nil {
		return nil, err
	}
	if len(pq.indexed) == 0 && len(pq.paths) == 0 && !pq.labels && len(pq.groups) == 0 {
		s.mu.RLock()
		defer s.mu.RUnlock()
		ix, ok := s.indexes[key]
		if !ok {
			return nil, &IndexNotFoundError{Name: index}
		}
		out := map[string]int{}
		for v, e := range ix.byValue {
			if n := e.count(q.Namespace, q.Namespace == ""); n > 0 && v != query.NonScalar {
				out[v] = n
			}
		}
		return out, nil
	}
	hits, _, _, err := s.matchAll(ctx, pq, key)
	if err != nil {
		var nf *IndexNotFoundError
		if errors.As(err, &nf) && nf.Name == key {
			return nil, &IndexNotFoundError{Name: index}
		}
		return nil, err
	}
	out := map[string]int{}
	for _, h := range hits {
		for _, v := range h.group {
			if v != query.NonScalar {
				out[v]++
			}
		}
	}
	return out, nil
}

// Validate checks q as Query does before it reads the store: every condition (a JSONPath
// compiled by opts.PathFunc, with the cache's limits), a Limit that is not negative, no
// empty AnyOf group, SortBy set when Descending is, a label selector only where opts.Labels
// reads labels, and, unless q.Scan is set, a positive indexed condition in q (in each AnyOf
// group or in Conditions), or query.ErrScanRequired. Index names are not resolved: whether
// the indexes exist is for the store that runs the query to say.
func Validate(q query.Query, opts QueryOptions) error {
	if q.Descending && q.SortBy == "" {
		return &query.InvalidError{Reason: "Descending needs SortBy"}
	}
	return validate(q, opts, false)
}

// ValidateCount is Validate for Count and CountBy, which ignore Limit, Continue, SortBy and
// Descending, and answer a query without any condition (no Conditions, AnyOf or label
// selector) from sizes, without Scan.
func ValidateCount(q query.Query, opts QueryOptions) error {
	q.Limit, q.Continue, q.SortBy, q.Descending = 0, "", "", false
	return validate(q, opts, true)
}

func validate(q query.Query, opts QueryOptions, count bool) error {
	opts.Resolve = nil
	pq, err := prepare(q, opts)
	if err != nil || q.Scan {
		return err
	}
	if count && len(pq.groups) == 0 && len(pq.indexed) == 0 && len(pq.paths) == 0 && !pq.labels {
		return nil // answered from sizes (countFromSizes)
	}
	if len(pq.groups) == 0 {
		if !pq.hasPositive() {
			return query.ErrScanRequired
		}
		return nil
	}
	for i, g := range pq.groups {
		if !g.hasPositive() {
			return groupScanRequired(pq.q.AnyOf[i], i)
		}
	}
	return nil
}

// hasPositive reports whether pq (without AnyOf groups) has a positive indexed condition,
// which can drive its candidates.
func (pq *prepared) hasPositive() bool {
	return slices.ContainsFunc(pq.indexed, func(m *matcher) bool { return m.cond.Op.Positive() })
}

// groupScanRequired is ErrScanRequired for AnyOf group i: it says which group, since the
// others may have what it lacks.
func groupScanRequired(group []query.Condition, i int) error {
	conds := make([]string, len(group))
	for j, c := range group {
		conds[j] = c.String()
	}
	return fmt.Errorf("%w: AnyOf group %d %s: no positive indexed condition in it or in Conditions",
		query.ErrScanRequired, i, quoteCut(strings.Join(conds, ", ")))
}

// prepared is a validated query: its conditions split by kind, index names resolved.
type prepared struct {
	q       query.Query
	opts    QueryOptions
	indexed []*matcher
	paths   []*matcher
	pathFns []IndexFunc
	labels  bool // q.Labels selects something
	// groups are the AND queries whose union answers q.AnyOf: q's conditions plus a group's.
	groups []*prepared
	// What a query of a few conditions needs, in the same allocation.
	mbuf   [2]matcher
	ixbuf  [2]*matcher
	walker walker
}

func prepare(q query.Query, opts QueryOptions) (*prepared, error) {
	if q.Limit < 0 {
		return nil, &query.InvalidError{Reason: fmt.Sprintf("Limit must not be negative, got %d", q.Limit)}
	}
	if len(q.AnyOf) > 0 {
		pq := &prepared{q: q, opts: opts}
		for i, g := range q.AnyOf {
			if len(g) == 0 {
				return nil, &query.InvalidError{Reason: fmt.Sprintf("AnyOf group %d needs at least one condition", i)}
			}
			sub := q
			sub.AnyOf = nil
			sub.Conditions = append(append([]query.Condition{}, q.Conditions...), g...)
			gq, err := prepare(sub, opts)
			if err != nil {
				return nil, err
			}
			pq.groups = append(pq.groups, gq)
		}
		return pq, nil
	}
	pq := &prepared{q: q, opts: opts, labels: q.Labels != nil && !q.Labels.Empty()}
	pq.indexed = pq.ixbuf[:0]
	for i, c := range q.Conditions {
		var m *matcher
		if i < len(pq.mbuf) {
			m = &pq.mbuf[i]
		}
		m, err := newMatcher(c, m)
		if err != nil {
			return nil, err
		}
		if c.Index != "" {
			if m.key, err = opts.resolve(c.Index); err != nil {
				return nil, err
			}
			pq.indexed = append(pq.indexed, m)
			continue
		}
		if opts.PathFunc == nil {
			return nil, &query.InvalidError{Condition: c.String(), Reason: "JSONPath conditions are not supported here"}
		}
		fn, err := opts.PathFunc(c.Path)
		if err != nil {
			return nil, &query.InvalidError{Condition: c.String(), Reason: "bad JSONPath", Err: err}
		}
		pq.paths = append(pq.paths, m)
		pq.pathFns = append(pq.pathFns, fn)
	}
	if pq.labels && opts.Labels == nil {
		return nil, &query.InvalidError{Reason: "label selectors are not supported here"}
	}
	return pq, nil
}

// matchAll is matches for a query with AnyOf groups too: the union of each group's matches
// (each planned on its own), every object once.
func (s *Store) matchAll(ctx context.Context, pq *prepared, group string) ([]Item, query.Plan, bool, error) {
	if len(pq.groups) == 0 {
		return s.matches(ctx, pq, group)
	}
	var out []Item
	var plan query.Plan
	seen := map[string]bool{}
	drivers := make([]string, 0, len(pq.groups))
	for i, g := range pq.groups {
		hits, p, _, err := s.matches(ctx, g, group)
		if err == query.ErrScanRequired {
			err = groupScanRequired(pq.q.AnyOf[i], i)
		}
		if err != nil {
			return nil, p, false, err
		}
		plan.Candidates += p.Candidates
		drivers = append(drivers, p.Driver)
		for _, h := range hits {
			if !seen[h.Key] {
				seen[h.Key] = true
				out = append(out, h)
			}
		}
	}
	plan.Driver = "any(" + strings.Join(drivers, " | ") + ")"
	plan.Matched = len(out)
	return out, plan, false, nil
}

// quoteCut quotes user text for an error message as package query's errors do: cut to its
// first 256 bytes (at a character boundary), marked "...".
func quoteCut(s string) string {
	const max = 256
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "..."
}

// matches returns what satisfies pq, with the values of the store index group if set; it
// reports whether they are in (namespace, name) order.
func (s *Store) matches(ctx context.Context, pq *prepared, group string) ([]Item, query.Plan, bool, error) {
	candidates, plan, sorted, err := s.candidates(ctx, pq, group, nil)
	if err != nil {
		return nil, plan, false, err
	}
	matched := candidates[:0]
	for i, h := range candidates {
		if len(pq.paths) > 0 && i%64 == 0 || i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, plan, false, err
			}
		}
		if pq.labels && !pq.q.Labels.Matches(labels.Set(pq.opts.Labels(h.Obj))) {
			continue
		}
		if !matchPaths(h.Obj, pq.paths, pq.pathFns) {
			continue
		}
		matched = append(matched, h)
	}
	plan.Matched = len(matched)
	return matched, plan, sorted, nil
}

// countFromSizes answers a count from the sizes the store keeps when pq allows it: no
// condition (the namespace's size), or one equality condition and nothing else (its value's
// size). A set condition (In) is not: an object with several of its values is in several
// values' lists, so their sizes do not add up to the objects.
func (s *Store) countFromSizes(pq *prepared) (int, query.Plan, bool, error) {
	if len(pq.paths) > 0 || pq.labels || len(pq.indexed) > 1 {
		return 0, query.Plan{}, false, nil
	}
	ns, allNS := pq.q.Namespace, pq.q.Namespace == ""
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(pq.indexed) == 0 {
		n := len(s.items)
		if !allNS {
			n, _ = s.inNamespace(ns)
		}
		return n, query.Plan{Driver: "count", Matched: n}, true, nil
	}
	m := pq.indexed[0]
	if m.cond.Op != query.Equal {
		return 0, query.Plan{}, false, nil
	}
	e, err := s.equalEntry(&m.cond, m.key)
	if err != nil {
		return 0, query.Plan{}, true, err
	}
	n := e.count(ns, allNS)
	return n, query.Plan{Driver: m.cond.String(), Matched: n}, true, nil
}

func matchPaths(obj any, conds []*matcher, fns []IndexFunc) bool {
	for i, m := range conds {
		values, err := safeValues(fns[i], obj)
		if (err != nil && m.negative()) || !m.match(values) {
			return false // see matcher.negative
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
func (s *Store) candidates(ctx context.Context, pq *prepared, group string, sel *pageSel) ([]Item, query.Plan, bool, error) {
	q, conds := pq.q, pq.indexed
	w := &pq.walker
	*w = walker{ctx: ctx, conds: conds, driver: -1, groupSlot: -1, sel: sel}
	ns, allNS := q.Namespace, q.Namespace == ""
	s.mu.RLock()
	defer s.mu.RUnlock()
	w.ixs = w.ixbuf[:0]
	best := 0
	for i, m := range conds {
		ix, ok := s.indexes[m.key]
		if !ok {
			return nil, w.plan, false, &IndexNotFoundError{Name: m.cond.Index}
		}
		w.ixs = append(w.ixs, ix)
		if !m.cond.Op.Positive() {
			continue
		}
		if n := estimate(ix, m, ns, allNS); w.driver < 0 || n < best {
			w.driver, best = i, n
		}
	}
	if w.driver < 0 && !q.Scan {
		return nil, w.plan, false, query.ErrScanRequired
	}
	if group != "" {
		ix, ok := s.indexes[group]
		if !ok {
			return nil, w.plan, false, &IndexNotFoundError{Name: group}
		}
		w.groupSlot = ix.slot
		w.gix = ix
	}
	if sel != nil && s.orderedPage(w, ns, allNS, best, q.SortBy) {
		return w.result(false)
	}
	if w.driver < 0 {
		// A scan, in (namespace, name) order.
		w.plan.Driver = "scan"
		s.walkKeys(ns, allNS, "", false, func(rec *record) bool {
			w.visit(rec)
			return w.stopped == nil
		})
		return w.result(true)
	}
	if sel == nil {
		w.out = make([]Item, 0, best)
	}
	w.plan.Driver = conds[w.driver].cond.String()
	w.dix, w.dm = w.ixs[w.driver], conds[w.driver]
	switch w.dm.cond.Op {
	case query.Equal:
		// One value's list: in (namespace, name) order.
		w.dix.byValue[w.dm.cond.Values[0]].each(ns, allNS, w.visitDriven)
		return w.result(true)
	case query.In:
		for v := range w.dm.set {
			w.dix.byValue[v].each(ns, allNS, w.visitDriven)
		}
	default:
		for value, e := range w.dix.byValue {
			if w.dm.matchValue(value) {
				e.each(ns, allNS, w.visitDriven)
			}
		}
	}
	return w.result(false)
}

// walker is one candidate walk, under the store's read lock: the records the driver lists
// (or every record in scope), checked against the other indexed conditions on the values
// each record holds.
type walker struct {
	ctx       context.Context
	conds     []*matcher
	ixs       []*index
	ixbuf     [4]*index
	driver    int    // -1: a scan
	groupSlot int    // -1: no group index
	gix       *index // the group index, if any
	dix       *index
	dm        *matcher
	plan      query.Plan
	out       []Item
	sel       *pageSel // if set, results go to it instead of out
	stopped   error
	// seen: a record is listed once per value, so only an object with several values can be
	// met twice when the driver reads several values; only those are remembered.
	seen map[*record]bool
}

func (w *walker) visit(rec *record) {
	if w.stopped != nil {
		return
	}
	if w.plan.Candidates%4096 == 4095 {
		if w.stopped = w.ctx.Err(); w.stopped != nil {
			return
		}
	}
	w.plan.Candidates++
	for i, m := range w.conds {
		if i != w.driver && !m.matchRecord(w.ixs[i], rec) {
			return
		}
	}
	h := Item{Key: rec.key, Obj: rec.obj}
	if w.sel != nil {
		var values []string
		if w.groupSlot >= 0 {
			values = rec.valuesOf(w.groupSlot)
		}
		w.sel.offer(h, values)
		return
	}
	if w.groupSlot >= 0 {
		h.group = rec.valuesOf(w.groupSlot)
	}
	w.out = append(w.out, h)
}

func (w *walker) visitDriven(rec *record) {
	if w.dm.cond.Op != query.Equal && len(rec.valuesOf(w.dix.slot)) > 1 {
		if w.seen[rec] {
			return
		}
		if w.seen == nil {
			w.seen = map[*record]bool{}
		}
		w.seen[rec] = true
	}
	w.visit(rec)
}

// result is the walk's outcome; sorted says whether the walk visited records in
// (namespace, name) order.
func (w *walker) result(sorted bool) ([]Item, query.Plan, bool, error) {
	if w.stopped != nil {
		return nil, w.plan, false, w.stopped
	}
	return w.out, w.plan, sorted && w.sel == nil, nil
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
func keyLess(a, b string) bool { return compareKeys(a, b) < 0 }

// compareKeys compares keys by namespace, then name. (Comparing the keys as strings would
// not do: '-', allowed in namespaces, sorts before '/'.)
func compareKeys(a, b string) int {
	if strings.IndexByte(a, '/') == strings.IndexByte(b, '/') {
		// Namespaces of one length (or none): byte order is (namespace, name) order.
		return strings.Compare(a, b)
	}
	an, aname := splitKey(a)
	bn, bname := splitKey(b)
	if c := strings.Compare(an, bn); c != 0 {
		return c
	}
	return strings.Compare(aname, bname)
}

// compareRecords is compareKeys of two records' keys, without searching them for their
// '/': records keep its position (record.sep). A B-tree insert compares about twenty
// times, and the two searches were most of each comparison (a quarter of the CPU time of
// loading 100,000 Pods from a snapshot).
func compareRecords(a, b *record) int {
	if a.sep == b.sep {
		return strings.Compare(a.key, b.key)
	}
	if c := strings.Compare(a.key[:max(a.sep-1, 0)], b.key[:max(b.sep-1, 0)]); c != 0 {
		return c
	}
	return strings.Compare(a.key[a.sep:], b.key[b.sep:])
}

func splitKey(key string) (ns, name string) {
	if i := strings.IndexByte(key, '/'); i >= 0 {
		return key[:i], key[i+1:]
	}
	return "", key
}

// Continue tokens are package query's (EncodeContinue, DecodeContinue): bound to the query
// and to the store (QueryOptions.Scope), checked for integrity. What they carry is the
// position of the last result returned: its key, and for a query with SortBy the value it
// sorted by first (a flag byte, the value's length as a uvarint, the value). The position
// stays valid while objects change: the next page starts after it, whatever was added or
// removed meanwhile.

// ErrInvalidContinue is query.ErrInvalidContinue.
var ErrInvalidContinue = query.ErrInvalidContinue

func encodeContinue(pos position, q query.Query, scope string) string {
	var b []byte
	if q.SortBy != "" {
		if pos.val.has {
			b = append(b, 1)
			b = binary.AppendUvarint(b, uint64(len(pos.val.s)))
			b = append(b, pos.val.s...)
		} else {
			b = append(b, 0)
		}
	}
	b = append(b, pos.key...)
	return query.EncodeContinue(q, scope, string(b))
}

func decodeContinue(token string, q query.Query, scope string) (position, bool, error) {
	if token == "" {
		return position{}, false, nil
	}
	q.Continue = token
	s, err := query.DecodeContinue(q, scope)
	if err != nil {
		return position{}, false, err
	}
	truncated := fmt.Errorf("%w: truncated position", ErrInvalidContinue)
	rest := []byte(s)
	var pos position
	if q.SortBy != "" {
		if len(rest) == 0 {
			return position{}, false, truncated
		}
		flag := rest[0]
		rest = rest[1:]
		if flag == 1 {
			n, k := binary.Uvarint(rest)
			if k <= 0 || uint64(len(rest)-k) < n {
				return position{}, false, truncated
			}
			pos.val = newSortValue([]string{string(rest[k : k+int(n)])}, false)
			rest = rest[k+int(n):]
		}
	}
	if len(rest) == 0 {
		return position{}, false, truncated
	}
	pos.key = string(rest)
	return pos, true, nil
}
