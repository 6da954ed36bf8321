package informer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/internal/store"
	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/query"
)

// Indexes and queries across a watch-all set. The set keeps its index definitions and
// registers each on every member, current and future (as the member's own reference, so they
// go with the member); a query runs on every member and names each result's resource.

// AddIndex registers a JSONPath index (AddIndex's dialect and rules) on every informer of
// the set, now and as resources join: "every object with label team=a", "every object whose
// {.spec.secretRef.name} is db-creds", whatever its kind. An object whose resource lacks the
// field has no value. Registering a name again with the same expression is a no-op; with
// another, an *IndexConflictError. A member where the name is already taken by another
// definition keeps that one; the error names it (a member that joins later, a log line),
// and queries of the set that name the index fail on that member with the same error
// rather than answer for the other definition, until that index is removed: the member then
// takes the set's at the set's next query.
func (w *WatchAll[T]) AddIndex(name, expr string) error {
	if !w.valid() {
		return ErrUninitialized
	}
	wa := w.wa
	p, err := jsonpath.CompileWithOptions(expr, wa.c.indexOpts)
	if err != nil {
		return fmt.Errorf("%w %s: %w", ErrInvalidIndex, quote(name), err)
	}
	spec, err := jsonPathIndex(wa.c.mode, name, p)
	if err != nil {
		return err
	}
	if err := validIndexName(name); err != nil {
		return err
	}
	wa.indexMu.Lock()
	defer wa.indexMu.Unlock()
	wa.mu.Lock()
	if wa.stopped {
		wa.mu.Unlock()
		return wa.stopErr
	}
	if cur, ok := wa.indexes[name]; ok {
		wa.mu.Unlock()
		if cur.key == spec.key {
			return nil
		}
		return &IndexConflictError{Name: name, Existing: cur.def, Requested: spec.def}
	}
	if wa.indexes == nil {
		wa.indexes = map[string]indexSpec{}
	}
	wa.indexes[name] = spec
	members := wa.indexHoldersLocked()
	wa.mu.Unlock()
	var errs []error
	for _, m := range members {
		if err := m.h.addIndex(name, spec); err != nil && !errors.Is(err, ErrReleased) {
			errs = append(errs, fmt.Errorf("%s: %w", resourceName(m.res.GVR.GroupResource()), err))
		}
	}
	return errors.Join(errs...)
}

// RemoveIndex removes an index the set registered, from every member; ErrIndexNotFound if
// the set did not register it, and AddIndex's error once the set is stopped (ErrReleased
// or ErrShutdown).
func (w *WatchAll[T]) RemoveIndex(name string) error {
	if !w.valid() {
		return ErrUninitialized
	}
	wa := w.wa
	wa.indexMu.Lock()
	defer wa.indexMu.Unlock()
	wa.mu.Lock()
	if wa.stopped {
		wa.mu.Unlock()
		return wa.stopErr
	}
	_, ok := wa.indexes[name]
	delete(wa.indexes, name)
	members := wa.indexHoldersLocked()
	wa.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: %s is not an index of the set", ErrIndexNotFound, quote(name))
	}
	for _, m := range members {
		_ = m.h.removeIndex(name) // a member that refused it has nothing to remove
	}
	return nil
}

// applyIndexes registers the set's indexes on a new member (its store is empty).
func (wa *watchAll) applyIndexes(m *member) {
	wa.indexMu.Lock()
	defer wa.indexMu.Unlock()
	wa.mu.Lock()
	specs := make(map[string]indexSpec, len(wa.indexes))
	for name, spec := range wa.indexes {
		specs[name] = spec
	}
	hook := wa.afterIndexCopy
	wa.mu.Unlock()
	if hook != nil {
		hook()
	}
	for name, spec := range specs {
		if err := m.h.addIndex(name, spec); err != nil && !errors.Is(err, ErrReleased) {
			wa.c.logger.Info("Watch-all index not registered on a member", "resource", resourceName(m.res.GVR.GroupResource()), "index", name, "err", err)
		}
	}
}

// ResourceItem is a result of a query across a watch-all set: the object, undecoded (see
// Item), and its resource.
type ResourceItem[T Object] struct {
	Resource discovery.Resource
	Item[T]
}

// QueryItems runs q on every member of the set and returns the matches, ordered by resource
// ("plural.group") and then as q orders them, one page of q.Limit with a continue token for
// the next when more results follow (a page full at a member's end asks the members after
// it for one match to know). Conditions name the set's indexes (AddIndex) or are JSONPath
// filters (compiled under Options.QueryJSONPath's limits, as the informers compile them:
// the set refuses a query its members would refuse, malformed or needing Scan, before
// naming any and even with none, and nothing they accept); a member that does not have an index q names, or has one of the set's names with
// another definition (an *IndexConflictError), fails the query (its error names the
// resource). The plan is the sum of the members' (its Driver the first member's). A token
// stays valid while objects change, as an informer's does, and when a resource moves to
// another version between pages: the next page goes on from the same position in the new
// version's objects. While a resource moves, queries and counts read the member it had until
// the new version's member has synced (or parked): its objects stay in the answers, named
// with the version they were read from, rather than vanish while the new initial list runs. On a stopped set (or one that stops while the query runs) it returns
// an error for which errors.Is(err, ErrReleased) is true, or errors.Is(err, ErrShutdown) if
// the factory's Shutdown stopped it, as an informer's Query does: never an empty answer.
func (w *WatchAll[T]) QueryItems(ctx context.Context, q query.Query) (query.Result[ResourceItem[T]], error) {
	var res query.Result[ResourceItem[T]]
	if ctx == nil {
		return res, fmt.Errorf("%w: WatchAll.QueryItems(nil, ...)", ErrNilContext)
	}
	if !w.valid() {
		return res, ErrUninitialized
	}
	if err := w.wa.gone(); err != nil {
		return res, err
	}
	if err := w.wa.c.validateQuery(q); err != nil {
		return res, err // the query's own error, before any member's name is put on it
	}
	res, err := readStable(w.wa, func(members []*member) (query.Result[ResourceItem[T]], error) {
		return w.queryItems(ctx, q, members)
	})
	if gerr := w.wa.gone(); gerr != nil {
		return query.Result[ResourceItem[T]]{}, gerr
	}
	return res, err
}

// readStable runs read on the set's readers, in the set's order, and again if one of them
// was released meanwhile: a resource's previous version, dropped once its new version has
// synced (member.prev), or a resource that left the set. Such a member's indexes and objects
// go with its release, so that what read got from it (an empty answer, an index not found)
// is not the set's. The next round reads the members that replaced it; after a few rounds
// (members released as fast as they come) the last answer stands.
func readStable[R any](wa *watchAll, read func(members []*member) (R, error)) (R, error) {
	for round := 0; ; round++ {
		members := wa.readers()
		r, err := read(members)
		if round == 3 || !slices.ContainsFunc(members, func(m *member) bool { return m.h.released.Load() }) {
			return r, err
		}
	}
}

// queryItems is QueryItems on members, the set's readers in its order.
func (w *WatchAll[T]) queryItems(ctx context.Context, q query.Query, members []*member) (query.Result[ResourceItem[T]], error) {
	var res query.Result[ResourceItem[T]]
	startAt, inner, err := w.wa.decodeSetContinue(q)
	if err != nil {
		return res, err
	}
	indexes := w.wa.indexesFor(members)
	limit := q.Limit
	for idx, m := range members {
		name := resourceName(m.res.GVR.GroupResource())
		if startAt != "" && name < startAt {
			continue
		}
		sub := q
		sub.Continue = ""
		if name == startAt {
			sub.Continue = inner
		}
		if limit > 0 {
			sub.Limit = limit - len(res.Items)
		}
		if err := m.h.e.reentered(); err != nil {
			return query.Result[ResourceItem[T]]{}, fmt.Errorf("kindex: %s: %w", name, err)
		}
		items, next, plan, err := m.h.e.store.Query(ctx, sub, memberOpts(m, indexes))
		if err != nil {
			return query.Result[ResourceItem[T]]{}, fmt.Errorf("kindex: %s: %w", name, err)
		}
		if res.Plan.Driver == "" {
			res.Plan.Driver = plan.Driver
		}
		res.Plan.Candidates += plan.Candidates
		res.Plan.Matched += plan.Matched
		for _, it := range items {
			res.Items = append(res.Items, ResourceItem[T]{Resource: m.res, Item: itemOf[T](w.wa.c, it.Obj)})
		}
		if next != "" {
			res.Continue = w.wa.encodeSetContinue(q, name, next)
			return res, nil
		}
		if limit > 0 && len(res.Items) >= limit {
			// The page is full at a member's end: the next page starts at the next member,
			// if one after it has a match.
			if moreAfter(ctx, q, members[idx+1:], indexes) {
				res.Continue = w.wa.encodeSetContinue(q, name+"\x00", "")
			}
			return res, nil
		}
	}
	return res, nil
}

// memberOpts are a member's query options in a query across the set: its informer's, with
// two differences. Its continue tokens are bound to the informer's key without the version,
// so that a set's token stays valid when the resource moves to another version
// (discovery's Changed): the position a token holds, a sort value and a key, means the same
// in every version's objects, and the set's own token already binds the query and the set.
// And a name the set registered (indexes) that the member holds with another definition (an
// index of the same name registered on the informer before the set's, which AddIndex
// reported) fails the query with an *IndexConflictError: the member would answer for
// another index than the one the caller asked the set for.
func memberOpts(m *member, indexes map[string]indexSpec) store.QueryOptions {
	opts := m.h.e.queryOpts
	opts.Scope = m.scope
	resolve := opts.Resolve
	opts.Resolve = func(name string) (string, error) {
		key, err := resolve(name)
		if spec, ok := indexes[name]; ok && err == nil && key != spec.key {
			cur, _ := m.h.e.indexSpecOf(name)
			return "", &IndexConflictError{Name: name, Existing: cur.def, Requested: spec.def}
		}
		return key, err
	}
	return opts
}

// indexesFor returns the set's index definitions, first registering on members those a
// member lacks: a member that refused one because its informer held another index of that
// name (AddIndex's *IndexConflictError) takes the set's once that one is removed, at the
// set's next query, instead of failing the set's queries with ErrIndexNotFound until it
// leaves the set. A member that holds every name costs a look per name.
func (wa *watchAll) indexesFor(members []*member) map[string]indexSpec {
	specs := wa.indexSpecs()
	for _, m := range members {
		for name := range specs {
			if _, ok := m.h.e.indexSpecOf(name); !ok {
				wa.repairIndexes(m)
				break
			}
		}
	}
	return wa.indexSpecs()
}

// repairIndexes registers on m the set's indexes it lacks, under the set's index lock (so
// that an index the set removes meanwhile is not registered again). A refusal (the conflict
// still there) is the query's to report.
func (wa *watchAll) repairIndexes(m *member) {
	wa.indexMu.Lock()
	defer wa.indexMu.Unlock()
	for name, spec := range wa.indexSpecs() {
		if _, ok := m.h.e.indexSpecOf(name); !ok {
			_ = m.h.addIndex(name, spec)
		}
	}
}

// indexSpecs returns a copy of the set's index definitions.
func (wa *watchAll) indexSpecs() map[string]indexSpec {
	wa.mu.Lock()
	defer wa.mu.Unlock()
	return maps.Clone(wa.indexes)
}

// moreAfter reports whether one of members has a match for q: a page that ends at a
// member's end carries a continue token only then, so that a set's token, like an
// informer's, means that more results follow. A member whose query fails counts as having
// one: the next page reports its error, as before.
func moreAfter(ctx context.Context, q query.Query, members []*member, indexes map[string]indexSpec) bool {
	sub := q
	sub.Continue, sub.Limit = "", 1
	for _, m := range members {
		if m.h.e.reentered() != nil {
			return true
		}
		items, _, _, err := m.h.e.store.Query(ctx, sub, memberOpts(m, indexes))
		if err != nil || len(items) > 0 {
			return true
		}
	}
	return false
}

// A set's continue token: the resource the next page starts at and that member's own
// token (bound to its query and to the member's informer, whatever its version: see
// memberOpts), the whole bound to the query and to the set
// (query's codec, with the set's source): a token that ends at a member's end has no
// member token, and was accepted by any other set running the same query.
func (wa *watchAll) encodeSetContinue(q query.Query, resource, inner string) string {
	return query.EncodeContinue(q, wa.source, resource+"\n"+inner)
}

func (wa *watchAll) decodeSetContinue(q query.Query) (resource, inner string, err error) {
	if q.Continue == "" {
		return "", "", nil
	}
	s, err := query.DecodeContinue(q, wa.source)
	if err != nil {
		return "", "", err
	}
	resource, inner, ok := strings.Cut(s, "\n")
	if !ok || resource == "" {
		return "", "", fmt.Errorf("%w: not a token of a watch-all set", ErrInvalidContinue)
	}
	return resource, inner, nil
}

// Count returns how many objects of every member match q (Limit, Continue, SortBy and
// Descending ignored). On a stopped set it fails as QueryItems does.
func (w *WatchAll[T]) Count(ctx context.Context, q query.Query) (int, error) {
	var total int
	err := w.eachCount(ctx, "Count", q, func() { total = 0 }, func(m *member, q query.Query, opts store.QueryOptions) error {
		n, _, err := m.h.e.store.Count(ctx, q, opts)
		total += n
		return err
	})
	if err != nil {
		return 0, err
	}
	return total, nil
}

// CountBy returns, for each value of the named index (one of the set's, AddIndex), how
// many objects of every member matching q have it, summed over the members, as
// Informer.CountBy counts on one informer: objects per label value, or per
// {.spec.secretRef.name}, whatever their resource. Limit, Continue, SortBy and Descending
// are ignored; a query with no condition is answered from each member's index sizes. On a
// stopped set it fails as QueryItems does.
func (w *WatchAll[T]) CountBy(ctx context.Context, q query.Query, index string) (map[string]int, error) {
	var out map[string]int
	err := w.eachCount(ctx, "CountBy", q, func() { out = map[string]int{} }, func(m *member, q query.Query, opts store.QueryOptions) error {
		counts, err := m.h.e.store.CountBy(ctx, q, index, opts)
		for v, n := range counts {
			out[v] += n
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// eachCount checks a count's arguments and q, then calls begin, and count on each member the
// set's queries read (with q as counts read it, and the member's query options), stopping at
// the first error, which names the member's resource; from begin again when readStable reads
// again.
func (w *WatchAll[T]) eachCount(ctx context.Context, method string, q query.Query, begin func(), count func(*member, query.Query, store.QueryOptions) error) error {
	if ctx == nil {
		return fmt.Errorf("%w: WatchAll.%s(nil, ...)", ErrNilContext, method)
	}
	if !w.valid() {
		return ErrUninitialized
	}
	if err := w.wa.gone(); err != nil {
		return err
	}
	// What counts ignore, as an informer's do, is not checked either.
	q.Limit, q.Continue, q.SortBy, q.Descending = 0, "", "", false
	if err := w.wa.c.validateCount(q); err != nil {
		return err
	}
	_, err := readStable(w.wa, func(members []*member) (struct{}, error) {
		begin() // a round starts the counts afresh
		// In the set's order, so that an error names the same member every time; a call
		// from a callback is refused before any member is counted.
		for _, m := range members {
			if err := m.h.e.reentered(); err != nil {
				return struct{}{}, fmt.Errorf("kindex: %s: %w", resourceName(m.res.GVR.GroupResource()), err)
			}
		}
		indexes := w.wa.indexesFor(members)
		for _, m := range members {
			if err := count(m, q, memberOpts(m, indexes)); err != nil {
				return struct{}{}, fmt.Errorf("kindex: %s: %w", resourceName(m.res.GVR.GroupResource()), err)
			}
		}
		return struct{}{}, nil
	})
	if gerr := w.wa.gone(); gerr != nil {
		return gerr
	}
	return err
}
