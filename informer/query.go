package informer

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kindex/kindex/indexfuncs"
	"github.com/kindex/kindex/internal/storage"
	"github.com/kindex/kindex/internal/store"
	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/query"
)

// Query answers q from the informer's cache: the conditions name indexes registered on the
// informer (AddIndex, AddBuiltinIndex, AddIndexFunc) or are JSONPath conditions
// (query.Where); results are the cached objects (shared, read-only) in (namespace, name)
// order or in q.SortBy's, one page of q.Limit with a continue token when more results
// follow. See package query for the semantics and this package's documentation for what
// each kind of condition costs. A query naming an index the informer does not have fails
// with ErrIndexNotFound; a malformed one with query.ErrInvalidQuery; one that would visit
// every object without q.Scan with query.ErrScanRequired; a continue token of another query
// or informer with ErrInvalidContinue. The walk over candidates, the JSONPath filters and,
// in the compact mode, the decoding of the results stop when ctx ends (the error is
// ctx's); JSONPath filters run with Options.QueryJSONPath's budget.
func (i *Informer[T]) Query(ctx context.Context, q query.Query) (query.Result[T], error) {
	if ctx == nil {
		return query.Result[T]{}, ErrNilContext
	}
	if !i.valid() {
		return query.Result[T]{}, ErrUninitialized
	}
	var res query.Result[T]
	if !i.h.c.objectDecodes {
		// Object is a type assertion: the results are made under the store's read lock, in
		// the one slice returned (no []store.Item first).
		return i.queryAs(ctx, q)
	}
	// The compact mode decodes each result: outside the store's lock.
	items, next, plan, err := i.query(ctx, q)
	if err != nil {
		return res, err
	}
	res.Items = make([]T, 0, len(items))
	for k, it := range items {
		// Decoding is most of such a query's time (tens of microseconds an object): a
		// page of 100,000 results takes seconds, so ctx is checked as the walk checks it.
		if k%decodeCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return query.Result[T]{}, err
			}
		}
		obj, err := objectAs[T](i.h.c.mode, it.Obj)
		if err != nil {
			return query.Result[T]{}, &DecodeError{Key: it.Key, Err: err}
		}
		res.Items = append(res.Items, obj)
	}
	res.Continue, res.Plan = next, plan
	return res, nil
}

// decodeCheckEvery is how many results Query decodes between two looks at its context.
const decodeCheckEvery = 64

// queryAs is Query for a storage mode whose Object does not decode (see core.objectDecodes).
func (i *Informer[T]) queryAs(ctx context.Context, q query.Query) (query.Result[T], error) {
	var res query.Result[T]
	h := i.h
	if err := h.enter(); err != nil {
		return res, err
	}
	var derr error
	items, next, plan, err := store.QueryAs(ctx, h.e.store, q, h.e.queryOpts, i.objects(&derr))
	if err := h.gone(); err != nil {
		return res, err // see unlessGone
	}
	if err == nil {
		err = derr
	}
	if err != nil {
		return res, err
	}
	res.Items, res.Continue, res.Plan = items, next, plan
	return res, nil
}

// Count returns how many cached objects match q (its Limit and Continue are ignored), with
// Query's conditions and errors. A query with no condition (the namespace's size) or one
// equality condition is answered from sizes the indexes keep, without visiting objects;
// any other visits the matches once, without sorting or decoding them.
func (i *Informer[T]) Count(ctx context.Context, q query.Query) (int, error) {
	if ctx == nil {
		return 0, ErrNilContext
	}
	if !i.valid() {
		return 0, ErrUninitialized
	}
	if err := i.h.enter(); err != nil {
		return 0, err
	}
	n, _, err := i.h.e.store.Count(ctx, q, i.h.e.queryOpts)
	return unlessGone(i.h, n, err)
}

// CountBy returns, for each value of the named index, how many cached objects matching q
// have it: pods per node (an index on {.spec.nodeName}), objects per phase, per label value.
// An object with several values counts once under each; objects without a value are not
// counted. A query with no condition is answered from the index's sizes, in time
// proportional to the index's distinct values, not the objects; otherwise the matches are
// visited once.
func (i *Informer[T]) CountBy(ctx context.Context, q query.Query, index string) (map[string]int, error) {
	if ctx == nil {
		return nil, ErrNilContext
	}
	if !i.valid() {
		return nil, ErrUninitialized
	}
	if err := i.h.enter(); err != nil {
		return nil, err
	}
	counts, err := i.h.e.store.CountBy(ctx, q, index, i.h.e.queryOpts)
	return unlessGone(i.h, counts, err)
}

// query runs q on the store: one page of stored items.
func (i *Informer[T]) query(ctx context.Context, q query.Query) ([]store.Item, string, query.Plan, error) {
	if err := i.h.enter(); err != nil {
		return nil, "", query.Plan{}, err
	}
	items, next, plan, err := i.h.e.store.Query(ctx, q, i.h.e.queryOpts)
	if err := i.h.gone(); err != nil {
		return nil, "", query.Plan{}, err // see unlessGone
	}
	return items, next, plan, err
}

// newQueryOptions are the entry's store.QueryOptions, built once: they resolve the
// informer's index names, compile JSONPath conditions (refused if the mode drops a field
// they read) and read labels.
func (e *entry) newQueryOptions() store.QueryOptions {
	opts := e.core.queryOptions()
	opts.Scope, opts.Resolve = e.key.String(), e.storeIndex
	return opts
}

// queryOptions are the store.QueryOptions every informer of the core shares: JSONPath
// conditions compiled with Options.QueryJSONPath's limits (refused if the mode drops a
// field they read), labels read as the mode holds them. Scope and Resolve are an
// informer's own.
func (c *core) queryOptions() store.QueryOptions {
	mode, paths := c.mode, &c.paths
	checker, _ := mode.(storage.PathChecker)
	return store.QueryOptions{
		PathFunc: func(expr string) (store.IndexFunc, error) {
			p, fn, err := paths.compile(expr)
			if err == nil && checker != nil {
				err = checker.CheckPath(p)
			}
			return fn, err
		},
		Labels: func(item any) map[string]string { return labelsOf(mode, item) },
	}
}

// validateQuery checks q as the core's informers check it before reading their caches
// (store.Validate, with their options): query.Validate's rules with JSONPath conditions
// compiled under Options.QueryJSONPath's limits and the mode's, not jsonpath's defaults,
// and a positive indexed condition unless Scan is set; so that a watch-all set refuses what
// its members would refuse, even when it has none, and nothing they accept. validateCount
// is the same for Count.
func (c *core) validateQuery(q query.Query) error {
	return store.Validate(q, c.queryOptions())
}

func (c *core) validateCount(q query.Query) error {
	return store.ValidateCount(q, c.queryOptions())
}

// storeIndex resolves an index name registered on the entry to the store index serving it.
func (e *entry) storeIndex(name string) (string, error) {
	e.idx.mu.RLock()
	defer e.idx.mu.RUnlock()
	n := e.idx.names[name]
	if n == nil {
		return "", &store.IndexNotFoundError{Name: name}
	}
	return n.spec.key, nil
}

// labelsOf reads a stored item's labels: from its metadata when the item exposes it, else
// from the object the mode makes of it.
func labelsOf(mode storage.Mode, item any) map[string]string {
	if m, err := meta.Accessor(item); err == nil {
		return m.GetLabels()
	}
	obj, err := mode.Object(item)
	if err != nil {
		return nil
	}
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetLabels()
	}
	return nil
}

// objectAs turns a stored item into the front end's object type.
func objectAs[T Object](mode storage.Mode, item any) (T, error) {
	var zero T
	obj, err := mode.Object(item)
	if err != nil {
		return zero, err
	}
	t, ok := obj.(T)
	if !ok {
		return zero, fmt.Errorf("kindex: cached item is a %T, not a %T", obj, zero)
	}
	return t, nil
}

// pathCache compiles the JSONPath of query.Where conditions into index functions, once per
// distinct expression and factory, with the factory's Options.QueryJSONPath limits:
// compiled paths are immutable, so they are kept (up to maxCompiledPaths; the cache is
// emptied when full).
type pathCache struct {
	opts jsonpath.Options
	mu   sync.Mutex
	m    map[string]compiled
}

// compile returns the path and its function; the Path itself is for a mode's
// storage.PathChecker.
func (pc *pathCache) compile(expr string) (*jsonpath.Path, store.IndexFunc, error) {
	pc.mu.Lock()
	c, ok := pc.m[expr]
	pc.mu.Unlock()
	if ok {
		return c.p, c.fn, nil
	}
	p, err := jsonpath.CompileWithOptions(expr, pc.opts)
	if err != nil {
		return nil, nil, err
	}
	c = compiled{p: p, fn: store.IndexFunc(indexfuncs.FromPath(p))}
	pc.mu.Lock()
	if pc.m == nil || len(pc.m) >= maxCompiledPaths {
		pc.m = map[string]compiled{}
	}
	pc.m[expr] = c
	pc.mu.Unlock()
	return c.p, c.fn, nil
}

const maxCompiledPaths = 256

type compiled struct {
	p  *jsonpath.Path
	fn store.IndexFunc
}
