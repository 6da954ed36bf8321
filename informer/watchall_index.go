package informer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kindex/kindex/discovery"
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
// definition keeps that one; the error names it.
func (w *WatchAll[T]) AddIndex(name, expr string) error {
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
	members := make([]*member, 0, len(wa.members))
	for _, m := range wa.members {
		members = append(members, m)
	}
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
// the set did not register it.
func (w *WatchAll[T]) RemoveIndex(name string) error {
	wa := w.wa
	wa.indexMu.Lock()
	defer wa.indexMu.Unlock()
	wa.mu.Lock()
	_, ok := wa.indexes[name]
	delete(wa.indexes, name)
	members := make([]*member, 0, len(wa.members))
	for _, m := range wa.members {
		members = append(members, m)
	}
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
// it for one match to know). Conditions name the set's indexes (AddIndex) or are JSONPath filters; a member
// that does not have an index q names fails the query (its error names the resource). The
// plan is the sum of the members' (its Driver the first member's).
func (w *WatchAll[T]) QueryItems(ctx context.Context, q query.Query) (query.Result[ResourceItem[T]], error) {
	var res query.Result[ResourceItem[T]]
	if ctx == nil {
		return res, fmt.Errorf("%w: WatchAll.QueryItems(nil, ...)", ErrNilContext)
	}
	if err := q.Validate(); err != nil {
		return res, err // the query's own error, before any member's name is put on it
	}
	members := w.wa.snapshot()
	slices.SortFunc(members, func(a, b *member) int {
		return strings.Compare(resourceName(a.res.GVR.GroupResource()), resourceName(b.res.GVR.GroupResource()))
	})
	startAt, inner, err := w.wa.decodeSetContinue(q)
	if err != nil {
		return res, err
	}
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
		items, next, plan, err := m.h.e.store.Query(ctx, sub, m.h.e.queryOpts)
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
			if moreAfter(ctx, q, members[idx+1:]) {
				res.Continue = w.wa.encodeSetContinue(q, name+"\x00", "")
			}
			return res, nil
		}
	}
	return res, nil
}

// moreAfter reports whether one of members has a match for q: a page that ends at a
// member's end carries a continue token only then, so that a set's token, like an
// informer's, means that more results follow. A member whose query fails counts as having
// one: the next page reports its error, as before.
func moreAfter(ctx context.Context, q query.Query, members []*member) bool {
	sub := q
	sub.Continue, sub.Limit = "", 1
	for _, m := range members {
		if m.h.e.reentered() != nil {
			return true
		}
		items, _, _, err := m.h.e.store.Query(ctx, sub, m.h.e.queryOpts)
		if err != nil || len(items) > 0 {
			return true
		}
	}
	return false
}

// A set's continue token: the resource the next page starts at and that member's own
// token (bound to its query and informer), the whole bound to the query and to the set
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
// Descending ignored).
func (w *WatchAll[T]) Count(ctx context.Context, q query.Query) (int, error) {
	if ctx == nil {
		return 0, fmt.Errorf("%w: WatchAll.Count(nil, ...)", ErrNilContext)
	}
	// What Count ignores, as an informer's Count does, is not checked either.
	q.Limit, q.Continue, q.SortBy, q.Descending = 0, "", "", false
	if err := q.Validate(); err != nil {
		return 0, err
	}
	total := 0
	for _, m := range w.wa.snapshot() {
		if err := m.h.e.reentered(); err != nil {
			return 0, fmt.Errorf("kindex: %s: %w", resourceName(m.res.GVR.GroupResource()), err)
		}
		n, _, err := m.h.e.store.Count(ctx, q, m.h.e.queryOpts)
		if err != nil {
			return 0, fmt.Errorf("kindex: %s: %w", resourceName(m.res.GVR.GroupResource()), err)
		}
		total += n
	}
	return total, nil
}
